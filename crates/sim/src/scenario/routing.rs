//! Static routing: shortest paths by hop count over the declared links.

use std::collections::VecDeque;

use super::{Direction, Hop, Link, LinkId, NodeId};

/// The shortest path from `from` to `to` by hop count, found by breadth-first
/// search that tries links in file order, so ties go to the path whose hops
/// come first in the file. `None` if `to` cannot be reached.
pub(crate) fn shortest_path(
    node_count: usize,
    links: &[Link],
    from: NodeId,
    to: NodeId,
) -> Option<Vec<Hop>> {
    // How each node was first reached: (previous node, hop).
    let mut reached: Vec<Option<(NodeId, Hop)>> = vec![None; node_count];
    let mut visited = vec![false; node_count];
    *visited.get_mut(from.0)? = true;
    let mut frontier = VecDeque::from([from]);
    while let Some(node) = frontier.pop_front() {
        if node == to {
            break;
        }
        for (index, link) in links.iter().enumerate() {
            let [a, b] = link.between;
            let (next, direction) = if a == node {
                (b, Direction::Forward)
            } else if b == node {
                (a, Direction::Reverse)
            } else {
                continue;
            };
            let Some(seen) = visited.get_mut(next.0) else {
                continue;
            };
            if !*seen {
                *seen = true;
                let hop = Hop {
                    link: LinkId(index),
                    direction,
                };
                if let Some(slot) = reached.get_mut(next.0) {
                    *slot = Some((node, hop));
                }
                frontier.push_back(next);
            }
        }
    }
    let mut path = Vec::new();
    let mut at = to;
    while at != from {
        let (previous, hop) = (*reached.get(at.0)?)?;
        path.push(hop);
        at = previous;
    }
    path.reverse();
    Some(path)
}
