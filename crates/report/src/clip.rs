//! Clipping data to the visible ranges before it is drawn. Plotters draws
//! whatever it is given, so a line to a point outside a range set with
//! `x_range`/`y_range` would run over the axes and the legend.

use crate::axis::Range;

/// The visible rectangle in data coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Window {
    /// The x range.
    pub(crate) x: Range,
    /// The y range.
    pub(crate) y: Range,
}

type Point = (f64, f64);

impl Window {
    /// Whether `point` is inside (edges included).
    pub(crate) fn contains(&self, (x, y): Point) -> bool {
        self.x.contains(x) && self.y.contains(y)
    }

    /// The part of the segment from `a` to `b` inside the window, if any
    /// (Liang-Barsky).
    pub(crate) fn segment(&self, a: Point, b: Point) -> Option<(Point, Point)> {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut enter, mut leave) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - self.x.low),
            (dx, self.x.high - a.0),
            (-dy, a.1 - self.y.low),
            (dy, self.y.high - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
            } else {
                let t = q / p;
                if p < 0.0 {
                    enter = enter.max(t);
                } else {
                    leave = leave.min(t);
                }
            }
        }
        if enter > leave {
            return None;
        }
        let at = |t: f64| {
            if t == 0.0 {
                a
            } else if t == 1.0 {
                b
            } else {
                (a.0 + t * dx, a.1 + t * dy)
            }
        };
        Some((at(enter), at(leave)))
    }

    /// The visible pieces of the line through `points`, each a polyline of
    /// at least two points.
    pub(crate) fn polyline(&self, points: &[Point]) -> Vec<Vec<Point>> {
        let mut pieces: Vec<Vec<Point>> = Vec::new();
        let mut current: Vec<Point> = Vec::new();
        for pair in points.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            match self.segment(a, b) {
                Some((from, to)) => {
                    if current.last() != Some(&from) {
                        if current.len() >= 2 {
                            pieces.push(std::mem::take(&mut current));
                        }
                        current.clear();
                        current.push(from);
                    }
                    current.push(to);
                }
                None => {
                    if current.len() >= 2 {
                        pieces.push(std::mem::take(&mut current));
                    }
                    current.clear();
                }
            }
        }
        if current.len() >= 2 {
            pieces.push(current);
        }
        pieces
    }

    /// The part of the polygon inside the window (Sutherland-Hodgman; the
    /// window is convex, so the result is one polygon), possibly empty.
    pub(crate) fn polygon(&self, polygon: &[Point]) -> Vec<Point> {
        let edges = [
            Edge::Left(self.x.low),
            Edge::Right(self.x.high),
            Edge::Bottom(self.y.low),
            Edge::Top(self.y.high),
        ];
        let mut output = polygon.to_vec();
        for edge in edges {
            let input = std::mem::take(&mut output);
            let Some(&last) = input.last() else {
                return output;
            };
            let mut previous = last;
            for &point in &input {
                match (edge.keeps(previous), edge.keeps(point)) {
                    (true, true) => output.push(point),
                    (true, false) => output.push(edge.cross(previous, point)),
                    (false, true) => {
                        output.push(edge.cross(previous, point));
                        output.push(point);
                    }
                    (false, false) => {}
                }
                previous = point;
            }
        }
        output
    }
}

/// One side of the window, at its coordinate.
#[derive(Clone, Copy, Debug)]
enum Edge {
    Left(f64),
    Right(f64),
    Bottom(f64),
    Top(f64),
}

impl Edge {
    /// Whether `point` is on the window's side of the edge.
    fn keeps(self, (x, y): Point) -> bool {
        match self {
            Edge::Left(at) => x >= at,
            Edge::Right(at) => x <= at,
            Edge::Bottom(at) => y >= at,
            Edge::Top(at) => y <= at,
        }
    }

    /// Where the segment from `a` to `b`, which crosses the edge, meets it.
    fn cross(self, a: Point, b: Point) -> Point {
        match self {
            Edge::Left(x) | Edge::Right(x) => (x, a.1 + (x - a.0) / (b.0 - a.0) * (b.1 - a.1)),
            Edge::Bottom(y) | Edge::Top(y) => (a.0 + (y - a.1) / (b.1 - a.1) * (b.0 - a.0), y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Window {
        Window {
            x: Range {
                low: 0.0,
                high: 1.0,
            },
            y: Range {
                low: 0.0,
                high: 1.0,
            },
        }
    }

    #[test]
    fn segments_are_cut_at_the_edges() {
        let w = unit();
        assert_eq!(
            w.segment((0.2, 0.2), (0.8, 0.8)),
            Some(((0.2, 0.2), (0.8, 0.8)))
        );
        assert_eq!(
            w.segment((-1.0, 0.5), (2.0, 0.5)),
            Some(((0.0, 0.5), (1.0, 0.5)))
        );
        assert_eq!(w.segment((2.0, 2.0), (3.0, 3.0)), None);
        assert_eq!(w.segment((-1.0, 2.0), (2.0, 2.0)), None);
        let (a, b) = w.segment((0.5, 0.5), (0.5, 5.0)).unwrap();
        assert_eq!(a, (0.5, 0.5));
        assert!((b.1 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_polyline_leaving_and_coming_back_is_two_pieces() {
        let pieces = unit().polyline(&[(0.1, 0.5), (0.3, 0.5), (0.5, 3.0), (0.7, 0.5), (0.9, 0.5)]);
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert_eq!(pieces[0][0], (0.1, 0.5));
        assert_eq!(pieces[0][1], (0.3, 0.5));
        assert_eq!(pieces[1].last(), Some(&(0.9, 0.5)));
        assert!(pieces.iter().flatten().all(|p| unit().contains(*p)));
        assert!(unit().polyline(&[(0.5, 0.5)]).is_empty());
    }

    #[test]
    fn polygons_are_cut_to_the_window() {
        let w = unit();
        let inside = [(0.2, 0.2), (0.8, 0.2), (0.8, 0.8)];
        assert_eq!(w.polygon(&inside), inside.to_vec());
        let big = w.polygon(&[(-1.0, -1.0), (2.0, -1.0), (2.0, 2.0), (-1.0, 2.0)]);
        assert!(big.iter().all(|p| w.contains(*p)), "{big:?}");
        assert_eq!(big.len(), 4);
        assert!(w.polygon(&[(2.0, 2.0), (3.0, 2.0), (3.0, 3.0)]).is_empty());
        assert!(w.polygon(&[]).is_empty());
    }
}
