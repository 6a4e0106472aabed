//! A module graph and the import cycles in it.
//!
//! Cycles are found as strongly connected components (Tarjan's algorithm): every module of a
//! component reaches every other, so a component of two or more modules holds at least one
//! cycle. Each is reported by one shortest cycle through its first module (with the line of every
//! import on it) and the list of its modules, since a large component has many cycles and
//! breaking the one shown may leave others.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

/// Where an import is written: a file of the crate and a line in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Modules and which use which, each edge with the first place it is written.
#[derive(Debug, Default)]
pub struct Graph {
    edges: BTreeMap<String, BTreeMap<String, Location>>,
}

impl Graph {
    pub fn add_module(&mut self, name: &str) {
        self.edges.entry(name.to_string()).or_default();
    }

    /// `from` uses `to` at `at`; a module using itself is no edge, and the first place is kept.
    pub fn add_edge(&mut self, from: &str, to: &str, at: Location) {
        self.add_module(to);
        if from != to {
            self.edges.entry(from.to_string()).or_default().entry(to.to_string()).or_insert(at);
        }
    }

    pub fn modules(&self) -> impl Iterator<Item = &str> {
        self.edges.keys().map(String::as_str)
    }

    /// `(from, to, where)` for every edge, in module order.
    pub fn edges(&self) -> impl Iterator<Item = (&str, &str, &Location)> {
        self.edges.iter().flat_map(|(from, to)| to.iter().map(move |(to, at)| (from.as_str(), to.as_str(), at)))
    }

    pub fn edge_count(&self) -> usize {
        self.edges.values().map(BTreeMap::len).sum()
    }

    /// One [`Cycle`] per group of modules that import each other, in module order.
    pub fn cycles(&self) -> Vec<Cycle> {
        self.components().into_iter().filter(|c| c.len() > 1).map(|c| self.cycle_in(&c)).collect()
    }

    fn targets(&self, from: &str) -> impl Iterator<Item = &str> {
        self.edges.get(from).into_iter().flat_map(|t| t.keys().map(String::as_str))
    }

    /// Strongly connected components (Tarjan), each sorted, sorted by their first module.
    fn components(&self) -> Vec<Vec<String>> {
        #[derive(Default)]
        struct State<'g> {
            next: usize,
            index: BTreeMap<&'g str, usize>,
            low: BTreeMap<&'g str, usize>,
            stack: Vec<&'g str>,
            on_stack: BTreeSet<&'g str>,
            found: Vec<Vec<String>>,
        }
        fn visit<'g>(g: &'g Graph, v: &'g str, s: &mut State<'g>) {
            s.index.insert(v, s.next);
            s.low.insert(v, s.next);
            s.next += 1;
            s.stack.push(v);
            s.on_stack.insert(v);
            for w in g.targets(v) {
                if !s.index.contains_key(w) {
                    visit(g, w, s);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
            if s.low[v] == s.index[v] {
                let mut component = Vec::new();
                while let Some(w) = s.stack.pop() {
                    s.on_stack.remove(w);
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                component.sort();
                s.found.push(component);
            }
        }
        let mut state = State::default();
        for v in self.modules() {
            if !state.index.contains_key(v) {
                visit(self, v, &mut state);
            }
        }
        state.found.sort();
        state.found
    }

    /// A shortest cycle through the first module of `component` (breadth-first, inside it).
    fn cycle_in(&self, component: &[String]) -> Cycle {
        let members: BTreeSet<&str> = component.iter().map(String::as_str).collect();
        let start = component[0].as_str();
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        let mut last = start;
        'search: while let Some(v) = queue.pop_front() {
            for w in self.targets(v).filter(|w| members.contains(w)) {
                if w == start {
                    last = v;
                    break 'search;
                }
                if !came_from.contains_key(w) {
                    came_from.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        // Walk back from the module that imports `start`.
        let mut path = vec![last];
        while let Some(&before) = came_from.get(path[path.len() - 1]) {
            path.push(before);
        }
        path.reverse();
        let steps = path
            .iter()
            .enumerate()
            .map(|(i, from)| {
                let to = path.get(i + 1).copied().unwrap_or(start);
                (from.to_string(), to.to_string(), self.edges[*from][to].clone())
            })
            .collect();
        Cycle { steps, component: component.to_vec() }
    }
}

/// Modules that import each other: one cycle among them, and all of them.
#[derive(Debug)]
pub struct Cycle {
    /// `(from, to, where)`: each import of the cycle, the last one back to the first module.
    pub steps: Vec<(String, String, Location)>,
    /// Every module of the group, sorted.
    pub component: Vec<String>,
}

impl Cycle {
    /// `a → b → c → a`.
    pub fn name(&self) -> String {
        let mut names: Vec<&str> = self.steps.iter().map(|(from, _, _)| from.as_str()).collect();
        names.push(&self.steps[0].0);
        names.join(" → ")
    }
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "import cycle {}", self.name())?;
        for (from, to, at) in &self.steps {
            writeln!(f, "    {from} uses {to} at {at}")?;
        }
        if self.component.len() > self.steps.len() {
            writeln!(f, "    (one of the cycles among {})", self.component.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::default();
        for (i, (from, to)) in edges.iter().enumerate() {
            g.add_module(from);
            g.add_edge(from, to, Location { file: format!("src/{from}.rs"), line: i + 1 });
        }
        g
    }

    #[test]
    fn a_diamond_and_self_imports_are_no_cycle() {
        let g = graph(&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "d"), ("e", "a")]);
        assert_eq!(g.modules().count(), 5);
        assert_eq!(g.edge_count(), 5, "the self-import is no edge");
        assert!(g.cycles().is_empty(), "{:?}", g.cycles());
    }

    #[test]
    fn a_three_module_cycle_is_named_with_its_imports() {
        let g = graph(&[("d", "a"), ("a", "b"), ("b", "c"), ("c", "a"), ("c", "e")]);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!(cycles[0].name(), "a → b → c → a");
        assert_eq!(cycles[0].component, ["a", "b", "c"]);
        assert_eq!(
            cycles[0].to_string(),
            "import cycle a → b → c → a\n    a uses b at src/a.rs:2\n    b uses c at src/b.rs:3\n    c uses a at src/c.rs:4\n"
        );
    }

    #[test]
    fn every_group_is_reported_once_with_a_shortest_cycle() {
        // x ↔ y, and p → q → r → p with the shortcut q → p: the shortest cycle through p is p → q → p.
        let g = graph(&[("x", "y"), ("y", "x"), ("p", "q"), ("q", "r"), ("r", "p"), ("q", "p"), ("y", "p")]);
        let cycles = g.cycles();
        let names: Vec<String> = cycles.iter().map(Cycle::name).collect();
        assert_eq!(names, ["p → q → p", "x → y → x"]);
        assert_eq!(cycles[0].component, ["p", "q", "r"]);
        assert!(cycles[0].to_string().contains("(one of the cycles among p, q, r)"), "{}", cycles[0]);
    }
}
