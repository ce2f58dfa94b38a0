//! Static routing: shortest paths by hop count over the declared links.

use std::collections::VecDeque;

use super::{Direction, Hop, LinkId, NodeId};

/// Finds shortest paths by hop count in one network, as breadth-first search
/// from the source that tries each node's links in file order, so that ties
/// go to the path whose hops come first in the file.
///
/// A scenario of 10,000 flows on a dumbbell spent minutes here before its
/// first event (each search scanned every link from every node it reached),
/// so the router works on the network's *core*, without its leaves (nodes
/// with a single link, such as a dumbbell's hosts), and finds the same
/// paths:
///
/// - A leaf other than the source never discovers a node in a
///   breadth-first search: its one neighbour is the node it was reached
///   from. Leaving the leaves out therefore changes neither the order in
///   which the other nodes are reached nor from where.
/// - A leaf source's path starts with its one link, and the search goes on
///   from its neighbour; a leaf destination is reached by its one link from
///   its neighbour, the search's real goal.
/// - The search stops when it reaches its goal: a node's predecessor is
///   fixed when the node is first reached.
///
/// The search's buffers are kept between searches and reset by a
/// generation count, so a search costs what it explores.
#[derive(Debug)]
pub(crate) struct Router {
    /// Per node, its links to nodes that are not leaves, in file order: (the
    /// node at the other end, the hop that goes there).
    core: Vec<Vec<(NodeId, Hop)>>,
    /// Per leaf, its one neighbour and the hop that goes there.
    leaf: Vec<Option<(NodeId, Hop)>>,
    /// Per node, the search in which it was last reached, and how: the
    /// previous node and the hop from it.
    reached: Vec<(u64, Option<(NodeId, Hop)>)>,
    /// The current search's number (the first is 1, so that 0 means never).
    search: u64,
    frontier: VecDeque<NodeId>,
}

impl Router {
    /// The router of `node_count` nodes joined by links between the given
    /// pairs of nodes (a link's `between`, in file order).
    pub(crate) fn new(node_count: usize, links: impl IntoIterator<Item = [NodeId; 2]>) -> Router {
        let mut adjacent: Vec<Vec<(NodeId, Hop)>> = vec![Vec::new(); node_count];
        for (index, [a, b]) in links.into_iter().enumerate() {
            let link = LinkId(index);
            if let Some(list) = adjacent.get_mut(a.0) {
                let direction = Direction::Forward;
                list.push((b, Hop { link, direction }));
            }
            // A link from a node to itself leads nowhere new: listed once.
            if b != a {
                if let Some(list) = adjacent.get_mut(b.0) {
                    let direction = Direction::Reverse;
                    list.push((a, Hop { link, direction }));
                }
            }
        }
        let leaf: Vec<Option<(NodeId, Hop)>> = adjacent
            .iter()
            .enumerate()
            .map(|(node, links)| match links.as_slice() {
                [(next, hop)] if next.0 != node => Some((*next, *hop)),
                _ => None,
            })
            .collect();
        let is_leaf = |node: NodeId| leaf.get(node.0).is_some_and(Option::is_some);
        let core = adjacent
            .into_iter()
            .map(|links| {
                links
                    .into_iter()
                    .filter(|(next, _)| !is_leaf(*next))
                    .collect()
            })
            .collect();
        Router {
            core,
            leaf,
            reached: vec![(0, None); node_count],
            search: 0,
            frontier: VecDeque::new(),
        }
    }

    /// The shortest path from `from` to `to`; `None` if `to` cannot be
    /// reached (or either node is unknown).
    pub(crate) fn shortest_path(&mut self, from: NodeId, to: NodeId) -> Option<Vec<Hop>> {
        let from_leaf = *self.leaf.get(from.0)?;
        let to_leaf = *self.leaf.get(to.0)?;
        if from == to {
            return Some(Vec::new());
        }
        let mut path = Vec::new();
        let start = match from_leaf {
            Some((neighbour, hop)) => {
                path.push(hop);
                neighbour
            }
            None => from,
        };
        if start == to {
            return Some(path);
        }
        // The hop from a leaf destination's neighbour is its link crossed
        // the other way.
        let (goal, last) = match to_leaf {
            Some((neighbour, hop)) => (neighbour, Some(reversed(hop))),
            None => (to, None),
        };
        path.extend(self.core_path(start, goal)?);
        path.extend(last);
        Some(path)
    }

    /// Breadth-first search from `start` to `goal` over the core.
    fn core_path(&mut self, start: NodeId, goal: NodeId) -> Option<Vec<Hop>> {
        self.search += 1;
        let search = self.search;
        *self.reached.get_mut(start.0)? = (search, None);
        self.frontier.clear();
        self.frontier.push_back(start);
        let mut found = start == goal;
        while let Some(node) = self.frontier.pop_front().filter(|_| !found) {
            let Some(links) = self.core.get(node.0) else {
                continue;
            };
            for &(next, hop) in links {
                let Some(seen) = self.reached.get_mut(next.0) else {
                    continue;
                };
                if seen.0 != search {
                    *seen = (search, Some((node, hop)));
                    if next == goal {
                        found = true;
                        break;
                    }
                    self.frontier.push_back(next);
                }
            }
        }
        if !found {
            return None;
        }
        let mut path = Vec::new();
        let mut at = goal;
        while at != start {
            let (previous, hop) = self.reached.get(at.0)?.1?;
            path.push(hop);
            at = previous;
        }
        path.reverse();
        Some(path)
    }
}

/// The same link crossed the other way.
fn reversed(hop: Hop) -> Hop {
    Hop {
        link: hop.link,
        direction: match hop.direction {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The search the router replaced: breadth-first over every link from
    /// every node reached, links in file order, stopping when the
    /// destination is taken from the frontier.
    fn reference(
        node_count: usize,
        links: &[[NodeId; 2]],
        from: NodeId,
        to: NodeId,
    ) -> Option<Vec<Hop>> {
        let mut reached: Vec<Option<(NodeId, Hop)>> = vec![None; node_count];
        let mut visited = vec![false; node_count];
        visited[from.0] = true;
        let mut frontier = VecDeque::from([from]);
        while let Some(node) = frontier.pop_front() {
            if node == to {
                break;
            }
            for (index, [a, b]) in links.iter().enumerate() {
                let (next, direction) = if *a == node {
                    (*b, Direction::Forward)
                } else if *b == node {
                    (*a, Direction::Reverse)
                } else {
                    continue;
                };
                if !visited[next.0] {
                    visited[next.0] = true;
                    reached[next.0] = Some((
                        node,
                        Hop {
                            link: LinkId(index),
                            direction,
                        },
                    ));
                    frontier.push_back(next);
                }
            }
        }
        let mut path = Vec::new();
        let mut at = to;
        while at != from {
            let (previous, hop) = reached[at.0]?;
            path.push(hop);
            at = previous;
        }
        path.reverse();
        Some(path)
    }

    #[test]
    fn a_dumbbell_routes_through_its_bottleneck() {
        // left(0) - right(1), hosts 2 and 3 on the left, 4 on the right.
        let links = [[0, 1], [2, 0], [3, 0], [1, 4]].map(|[a, b]| [NodeId(a), NodeId(b)]);
        let mut router = Router::new(5, links);
        let hop = |link, direction| Hop {
            link: LinkId(link),
            direction,
        };
        assert_eq!(
            router.shortest_path(NodeId(2), NodeId(4)),
            Some(vec![
                hop(1, Direction::Forward),
                hop(0, Direction::Forward),
                hop(3, Direction::Forward)
            ])
        );
        assert_eq!(
            router.shortest_path(NodeId(4), NodeId(3)),
            Some(vec![
                hop(3, Direction::Reverse),
                hop(0, Direction::Reverse),
                hop(2, Direction::Reverse)
            ])
        );
        assert_eq!(
            router.shortest_path(NodeId(2), NodeId(0)),
            Some(vec![hop(1, Direction::Forward)])
        );
        assert_eq!(router.shortest_path(NodeId(2), NodeId(2)), Some(vec![]));
    }

    proptest! {
        #[test]
        fn finds_the_paths_of_a_search_over_every_link(
            node_count in 1usize..12,
            pairs in proptest::collection::vec((0usize..12, 0usize..12), 0..20),
            queries in proptest::collection::vec((0usize..12, 0usize..12), 1..10),
        ) {
            let links: Vec<[NodeId; 2]> = pairs
                .iter()
                .filter(|(a, b)| *a < node_count && *b < node_count)
                .map(|&(a, b)| [NodeId(a), NodeId(b)])
                .collect();
            let mut router = Router::new(node_count, links.iter().copied());
            for (from, to) in queries {
                let (from, to) = (NodeId(from % node_count), NodeId(to % node_count));
                prop_assert_eq!(
                    router.shortest_path(from, to),
                    reference(node_count, &links, from, to),
                    "from {:?} to {:?} over {:?}", from, to, links
                );
            }
        }
    }
}
