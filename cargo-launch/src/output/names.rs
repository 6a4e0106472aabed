//! Kernel names as the text outputs print them. Template-heavy C++ (CUB, CUTLASS, marlin) gives
//! demangled names of over a thousand characters; printed whole they make a table unreadable.
//!
//! The rule (the book's "Kernel names in text output", `docs/src/guide/report.md`): a name of at most the width (60
//! characters; in `report --summary`, what the other columns leave of 120) prints as it is. A longer one loses its return type, its parameters and
//! the arguments of each template (`void foo<128, cub::X<int>>(float*, int)` → `foo<…>`), and
//! what is still too long keeps its start and its end around a `…`. Where distinct kernels would
//! print alike, they show the template argument that tells them apart, the last
//! (`gemm<…, 128>`) or else the first (`gemm<128, …>`), or failing that ` #1`, ` #2`… in the
//! order of their full names. The full names stay in `--format json`, SARIF and `--detailed`
//! (under the shortened one).

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The most characters a kernel name takes in text output.
pub(crate) const KERNEL_WIDTH: usize = 60;

/// The widest line of `report --summary` when its other columns leave room (a kernel column is
/// never narrowed below [`KERNEL_WIDTH_MIN`]).
pub(crate) const LINE_WIDTH: usize = 120;

/// The narrowest kernel column `report --summary` gives long names.
pub(crate) const KERNEL_WIDTH_MIN: usize = 24;

/// The printed form of a set of full names: each distinct name one short name, no two alike.
#[derive(Debug, Default)]
pub(crate) struct Short {
    map: HashMap<String, String>,
}

impl Short {
    /// Short forms of `names` (repeats allowed), each at most `width` characters.
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>, width: usize) -> Self {
        let distinct: BTreeSet<&str> = names.into_iter().collect();
        let mut map: HashMap<String, String> = distinct.iter().map(|n| (n.to_string(), elide(n, width))).collect();
        // Full names by printed form (BTreeSet: in name order, for stable numbers).
        let mut alike: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        for n in &distinct {
            alike.entry(map[*n].clone()).or_default().insert(n);
        }
        for group in alike.values().filter(|g| g.len() > 1) {
            let named = distinguished(group, width)
                .unwrap_or_else(|| group.iter().enumerate().map(|(i, n)| numbered(n, i + 1, width)).collect());
            for (n, short) in group.iter().zip(named) {
                map.insert(n.to_string(), short);
            }
        }
        // Shortened again to make room for the number, two groups can meet: number those by
        // their place among all names, which no two share.
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for v in map.values() {
            *seen.entry(v.as_str()).or_default() += 1;
        }
        let clashing: BTreeSet<&str> = distinct.iter().copied().filter(|n| seen[map[*n].as_str()] > 1).collect();
        let renumbered: Vec<(String, String)> = distinct
            .iter()
            .enumerate()
            .filter(|(_, n)| clashing.contains(**n))
            .map(|(i, n)| (n.to_string(), numbered(n, i + 1, width)))
            .collect();
        map.extend(renumbered);
        Self { map }
    }

    /// The printed form of `name` (`name` itself when it was not given to [`Short::new`]).
    pub(crate) fn of<'a>(&'a self, name: &'a str) -> &'a str {
        self.map.get(name).map_or(name, String::as_str)
    }

    /// Whether `name` prints otherwise than it is.
    pub(crate) fn shortened(&self, name: &str) -> bool {
        self.of(name) != name
    }
}

/// The names of `group` (alike when shortened) with the template argument that tells them apart:
/// the last (`gemm<…, 128>`, `gemm<…, 256>`), else the first (`gemm<128, …>`); `None` where neither
/// does or the names would not fit in `width`.
fn distinguished(group: &BTreeSet<&str>, width: usize) -> Option<Vec<String>> {
    let scanned: Vec<(String, Vec<String>)> = group.iter().map(|n| scan(n)).collect();
    let with = |stem: &str, args: &[String], last: bool| match (args, last) {
        ([one], _) => format!("{stem}<{one}>"),
        ([.., arg], true) => format!("{stem}<…, {arg}>"),
        ([arg, ..], false) => format!("{stem}<{arg}, …>"),
        ([], _) => format!("{stem}<>"),
    };
    [true, false].into_iter().find_map(|last| {
        let names = (scanned.iter())
            .map(|(short, args)| {
                let stem = short.strip_suffix("<…>")?;
                Some(with(stem, args, last)).filter(|n| n.chars().count() <= width)
            })
            .collect::<Option<Vec<String>>>()?;
        (names.iter().collect::<BTreeSet<_>>().len() == names.len()).then_some(names)
    })
}

/// `name` shortened to `width - 3` or so, then ` #n`.
fn numbered(name: &str, n: usize, width: usize) -> String {
    let suffix = format!(" #{n}");
    let base = shorten(name);
    format!("{}{suffix}", fit(&base, width.saturating_sub(suffix.chars().count())))
}

/// One name on its own: as it is when it fits in `width`, else [`shorten`]ed and then cut in the
/// middle.
pub(crate) fn elide(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        return name.to_string();
    }
    fit(&shorten(name), width)
}

/// At most `width` characters: the start and the end of `s` around `…` (the end tells kernels of
/// one family apart, the start says which family).
pub(crate) fn fit(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    let width = width.max(3);
    let tail = (width - 1) / 2;
    let head = width - 1 - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// A demangled signature without its return type, parameters and template arguments:
/// `void ns::foo<128, X<int>>(float*, int)` → `ns::foo<…>`. A `kernels/a.cu::` prefix (a name
/// qualified by its file) is kept. Operators (`operator()`, `operator<`), `(anonymous namespace)`
/// and `{lambda(int)#1}` are read as single pieces.
pub(crate) fn shorten(name: &str) -> String {
    scan(name).0
}

/// [`shorten`], and the arguments of the name's last template (the function's own when the
/// shortened name ends in `<…>`), split at their top-level commas.
fn scan(name: &str) -> (String, Vec<String>) {
    // A file name has a `.`, a C++ identifier none.
    let (file, sig) = match name.split_once("::") {
        Some((file, rest)) if file.contains('.') => (&name[..file.len() + 2], rest),
        _ => ("", name),
    };
    let c: Vec<char> = sig.chars().collect();
    let mut out = String::new();
    let mut last = String::new();
    let mut i = 0;
    while i < c.len() {
        if word_at(&c, i, "operator") {
            let op = operator_len(&c, i + 8);
            out.extend(&c[i..i + 8 + op]);
            i += 8 + op;
            // `operator< <int>`: the space keeps the operator apart from its template arguments.
            if c.get(i) == Some(&' ') && c.get(i + 1) == Some(&'<') {
                out.push(' ');
                i += 1;
            }
            continue;
        }
        match c[i] {
            '<' => {
                let end = closing(&c, i);
                last = c[i + 1..end.max(i + 1)].iter().collect();
                out.push_str("<…>");
                i = end + 1;
            }
            // The parameters: what follows a name; a `(` elsewhere opens `(anonymous namespace)`.
            // (`(anonymous namespace)` comes first or after `::`).
            '(' if !out.is_empty() && !out.ends_with(':') => break,
            '(' | '{' | '[' => {
                let end = closing(&c, i);
                out.extend(&c[i..=end.min(c.len() - 1)]);
                i = end + 1;
            }
            // The return type ends at a space outside brackets.
            ' ' => {
                out.clear();
                i += 1;
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    let args = if out.ends_with("<…>") { split_args(&last) } else { Vec::new() };
    (format!("{file}{out}"), args)
}

/// `128, X<int, 2>, 3` → `128`, `X<int, 2>`, `3`.
fn split_args(s: &str) -> Vec<String> {
    let mut args = vec![String::new()];
    let (mut angle, mut other) = (0usize, 0usize);
    for ch in s.chars() {
        match ch {
            '(' | '[' | '{' => other += 1,
            ')' | ']' | '}' => other = other.saturating_sub(1),
            '<' if other == 0 => angle += 1,
            '>' if other == 0 => angle = angle.saturating_sub(1),
            ',' if angle == 0 && other == 0 => {
                args.push(String::new());
                continue;
            }
            _ => {}
        }
        args.last_mut().expect("one argument at least").push(ch);
    }
    args.into_iter().map(|a| a.trim().to_string()).collect()
}

/// Whether `word` starts at `i` as a whole identifier.
fn word_at(c: &[char], i: usize, word: &str) -> bool {
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let w: Vec<char> = word.chars().collect();
    c.len() >= i + w.len()
        && c[i..i + w.len()] == w[..]
        && (i == 0 || !ident(c[i - 1]))
        && c.get(i + w.len()).is_none_or(|&ch| !ident(ch))
}

/// The length of the operator symbol at `i` (after `operator`): `()`, `[]`, `<<=`, `->*`, `<`…
fn operator_len(c: &[char], i: usize) -> usize {
    const OPS: [&str; 40] = [
        "()", "[]", "->*", "<=>", "<<=", ">>=", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=",
        "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "=", ",",
        " ",
    ];
    let rest: String = c[i.min(c.len())..].iter().take(3).collect();
    // `operator<<int>(…)`: `operator<` with template arguments (`operator<<` is followed by its
    // parameters or a space).
    if rest.starts_with("<<") && rest.chars().nth(2).is_some_and(|ch| !matches!(ch, '(' | ' ' | '=' | '<')) {
        return 1;
    }
    // `operator new`, `operator int`: a word follows; the scan goes on with it.
    OPS.iter().find(|op| rest.starts_with(*op)).map_or(0, |op| if *op == " " { 0 } else { op.chars().count() })
}

/// The index of the bracket closing the one at `open` (the last index when unbalanced). Inside
/// `<…>` only angle brackets outside parentheses count (`X<(1>2)>`).
fn closing(c: &[char], open: usize) -> usize {
    let mut stack: Vec<char> = Vec::new();
    let mut i = open;
    while i < c.len() {
        if word_at(c, i, "operator") {
            i += 8 + operator_len(c, i + 8);
            continue;
        }
        let in_parens = stack.iter().any(|&b| b != '<');
        match c[i] {
            '<' if !in_parens => stack.push('<'),
            '(' | '[' | '{' => stack.push(c[i]),
            '>' | ')' | ']' | '}' => {
                let want = match c[i] {
                    '>' => '<',
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if c[i] == '>' && in_parens {
                    i += 1;
                    continue;
                }
                if stack.last() == Some(&want) {
                    stack.pop();
                }
                if stack.is_empty() {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    c.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_lose_their_arguments_return_type_and_parameters() {
        assert_eq!(shorten("void foo<128, cub::detail::X<int, Y<float>>>(float*, int)"), "foo<…>");
        assert_eq!(shorten("void ns::inner::foo<8>(int*)"), "ns::inner::foo<…>");
        assert_eq!(shorten("fill"), "fill");
        assert_eq!(shorten("k(float const*)"), "k");
        // A member template of a class template.
        assert_eq!(shorten("void ns::S<int>::run<2, 3>(int)"), "ns::S<…>::run<…>");
        // Expressions in template arguments hold `>` inside parentheses.
        assert_eq!(shorten("void k<(1>2), int>(int)"), "k<…>");
    }

    #[test]
    fn operators_anonymous_namespaces_and_lambdas_are_single_pieces() {
        assert_eq!(shorten("void ns::F<int>::operator()(int)"), "ns::F<…>::operator()");
        assert_eq!(shorten("bool operator<<int>(int, int)"), "operator<<…>");
        assert_eq!(shorten("bool ns::operator< <int>(A, A)"), "ns::operator< <…>");
        assert_eq!(shorten("S& operator<<(S&, int)"), "operator<<");
        assert_eq!(shorten("void k<&operator<<, 1>(int)"), "k<…>");
        assert_eq!(shorten("void k<&ns::operator<, 3>(int)"), "k<…>");
        assert_eq!(shorten("void (anonymous namespace)::k<int>(float*)"), "(anonymous namespace)::k<…>");
        assert_eq!(shorten("void ns::(anonymous namespace)::k(float*)"), "ns::(anonymous namespace)::k");
        assert_eq!(shorten("void k<main::{lambda(int)#1}>(main::{lambda(int)#1})"), "k<…>");
        assert_eq!(shorten("void f::{lambda(int)#1}::operator()(int) const"), "f::{lambda(int)#1}::operator()");
        assert_eq!(shorten("kernels/a.cu::void foo<1>(int)"), "kernels/a.cu::foo<…>");
    }

    #[test]
    fn short_names_print_as_they_are_and_long_ones_within_the_width() {
        assert_eq!(elide("void tmpl<8>(int*)", 60), "void tmpl<8>(int*)");
        let long = format!("void gemm<{}>(float*)", "cub::Policy<int>, ".repeat(40));
        assert_eq!(elide(&long, 60), "gemm<…>");
        let deep = format!("void {}kernel<1>(int)", "namespace_with_a_long_name::".repeat(5));
        let e = elide(&deep, 60);
        assert_eq!(e.chars().count(), 60, "{e}");
        assert!(e.starts_with("namespace_with_a_long_name::") && e.ends_with("::kernel<…>"), "{e}");
        assert!(e.contains('…'));
    }

    #[test]
    fn distinct_names_that_shorten_alike_show_the_argument_that_tells_them_apart() {
        let policy = "cub::detail::Policy<int, 4>, ".repeat(10);
        let (a, b) = (format!("void gemm<{policy}128>(float*)"), format!("void gemm<{policy}256>(float*)"));
        let other = format!("void scan<{policy}1>(int*)");
        let short = Short::new([b.as_str(), a.as_str(), other.as_str(), a.as_str(), "fill"], 60);
        assert_eq!(short.of(&a), "gemm<…, 128>");
        assert_eq!(short.of(&b), "gemm<…, 256>");
        assert_eq!(short.of(&other), "scan<…>");
        assert_eq!(short.of("fill"), "fill");
        assert!(short.shortened(&a) && !short.shortened("fill"));
        // The last arguments alike, the first tells them apart.
        let (c, d) = (format!("void gemm<1, {policy}8>(float*)"), format!("void gemm<2, {policy}8>(float*)"));
        let short = Short::new([c.as_str(), d.as_str()], 60);
        assert_eq!((short.of(&c), short.of(&d)), ("gemm<1, …>", "gemm<2, …>"));
        // One argument, in long parameters' company.
        let params = "cub::detail::Policy<int, 4>*, ".repeat(3);
        let (e, f) = (format!("void k<1>({params}int)"), format!("void k<2>({params}int)"));
        let short = Short::new([e.as_str(), f.as_str()], 60);
        assert_eq!((short.of(&e), short.of(&f)), ("k<1>", "k<2>"));
    }

    #[test]
    fn names_no_argument_tells_apart_are_numbered_in_name_order() {
        let (a, b) = (
            format!("void gemm<1, X, {}>(float*)", "p".repeat(60)),
            format!("void gemm<1, Y, {}>(float*)", "p".repeat(60)),
        );
        let overload = |t: &str| format!("void ns::k({t}, {})", "cub::detail::Policy<int, 4>".repeat(3));
        let (c, d) = (overload("float"), overload("int"));
        let short = Short::new([b.as_str(), a.as_str(), c.as_str(), d.as_str()], 60);
        assert_eq!((short.of(&a), short.of(&b)), ("gemm<…> #1", "gemm<…> #2"));
        // Overloads: no template to tell them apart.
        assert_eq!((short.of(&c), short.of(&d)), ("ns::k #1", "ns::k #2"));
        // Numbered names still fit.
        let many: Vec<String> =
            (0..12).map(|i| format!("void {}<{i}, {}>(int)", "k".repeat(70), "Z<int>, ".repeat(9))).collect();
        let short = Short::new(many.iter().map(String::as_str), 40);
        let printed: BTreeSet<&str> = many.iter().map(|n| short.of(n)).collect();
        assert_eq!(printed.len(), 12, "{printed:?}");
        assert!(printed.iter().all(|p| p.chars().count() <= 40), "{printed:?}");
        assert!(printed.contains(&format!("{}…{}<…> #12", "k".repeat(18), "k".repeat(14)).as_str()), "{printed:?}");
    }
}
