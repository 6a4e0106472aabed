//! A crate's module graph, read from its sources: which top-level module uses which.
//!
//! The modules are the ones `src/lib.rs` (or `src/main.rs`) declares, in files or inline; a
//! sub-module counts as its top-level module. A module uses another when it names it through
//! `crate::…`, `super::…` or `self::…`: in a `use` (groups and renames included), in a path in
//! code or types, in a macro's tokens, or in an attribute's arguments, as a path
//! (`#[arg(value_parser = crate::cli::parse)]`) or as a string given to a key
//! (`#[serde(with = "crate::hex")]`), since derives turn both into code. `crate::Name` for something the crate root imports
//! (`pub use report::Name;`) counts as a use of the module it comes from. Items under
//! `#[cfg(test)]` are left out: tests may reach anywhere. The root itself is left out too: it
//! declares and dispatches to every module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Attribute, ImplItem, Item, Meta, UseTree};

use crate::graph::{Graph, Location};

/// The graph of the crate in `crate_dir`.
pub fn crate_graph(crate_dir: &Path) -> Result<Graph, String> {
    Ok(read(crate_dir)?.graph)
}

/// For each module with sub-modules (`cuda`, `analysis`, `cache`, ...), the graph of its direct
/// sub-modules: which uses which (a sub-module's own sub-modules count as it). Only paths to a
/// sibling count: an item the parent declares or re-exports is the parent's, so these graphs
/// miss a cycle that goes through the parent's re-exports, never report one that is not there.
pub fn nested_graphs(crate_dir: &Path) -> Result<BTreeMap<String, Graph>, String> {
    let reader = read(crate_dir)?;
    let mut graphs = reader.nested;
    for (parent, children) in &reader.children {
        let g = graphs.entry(parent.clone()).or_default();
        children.iter().for_each(|c| g.add_module(c));
    }
    graphs.retain(|parent, _| reader.children.get(parent).is_some_and(|c| c.len() > 1));
    Ok(graphs)
}

fn read(crate_dir: &Path) -> Result<Reader<'_>, String> {
    let root_file = ["src/lib.rs", "src/main.rs"]
        .iter()
        .map(|f| crate_dir.join(f))
        .find(|f| f.is_file())
        .ok_or_else(|| format!("{} has neither src/lib.rs nor src/main.rs", crate_dir.display()))?;
    let root = parse(&root_file)?;
    let mut reader = Reader {
        crate_dir,
        top: BTreeSet::new(),
        root_names: BTreeMap::new(),
        graph: Graph::default(),
        children: BTreeMap::new(),
        pending: Vec::new(),
        nested: BTreeMap::new(),
    };
    for item in root.items.iter().filter(|i| !is_test_only(attrs(i))) {
        match item {
            Item::Mod(m) => {
                reader.top.insert(m.ident.to_string());
            }
            Item::Use(u) => root_imports(&u.tree, &mut Vec::new(), &mut reader.root_names),
            _ => {}
        }
    }
    // Root imports of something other than a top-level module (`use launch::Arch`) resolve nowhere.
    let top = reader.top.clone();
    reader.root_names.retain(|_, module| top.contains(module));
    for name in &top {
        reader.graph.add_module(name);
    }
    let dir = root_file.parent().expect("src/ holds the root file").to_path_buf();
    for item in &root.items {
        if let Item::Mod(m) = item {
            if !is_test_only(&m.attrs) {
                reader.module(m, &[], &root_file, &dir)?;
            }
        }
    }
    // Sibling edges, now that every module's children are known.
    for (from, to, at) in std::mem::take(&mut reader.pending) {
        for d in 1..from.len().min(to.len()) {
            if from[..d] != to[..d] {
                break;
            }
            let parent = from[..d].join("::");
            if from[d] != to[d] && reader.children.get(&parent).is_some_and(|c| c.contains(&to[d])) {
                reader.nested.entry(parent).or_default().add_edge(&from[d], &to[d], at.clone());
            }
        }
    }
    Ok(reader)
}

struct Reader<'a> {
    crate_dir: &'a Path,
    /// The top-level modules.
    top: BTreeSet<String>,
    /// Names the root imports, and the top-level module each comes from.
    root_names: BTreeMap<String, String>,
    graph: Graph,
    /// Each module path (`cuda`, `analysis`) and the names of its direct sub-modules.
    children: BTreeMap<String, BTreeSet<String>>,
    /// Every reference (from module path, to absolute path, where), for the sibling graphs.
    pending: Vec<(Vec<String>, Vec<String>, Location)>,
    /// Per module path, the graph of its direct sub-modules.
    nested: BTreeMap<String, Graph>,
}

impl Reader<'_> {
    /// Reads module `m`, declared in `file` inside module `parent`; `dir` holds the files of
    /// `parent`'s sub-modules.
    fn module(&mut self, m: &syn::ItemMod, parent: &[String], file: &Path, dir: &Path) -> Result<(), String> {
        let mut path = parent.to_vec();
        path.push(m.ident.to_string());
        if !parent.is_empty() {
            self.children.entry(parent.join("::")).or_default().insert(m.ident.to_string());
        }
        if let Some(a) = m.attrs.iter().find(|a| a.path().is_ident("path")) {
            let at = self.location(file, a.path().segments[0].ident.span().start().line);
            return Err(format!("{at}: #[path] is not followed by this test; declare the module in its usual file"));
        }
        if let Some((_, items)) = &m.content {
            return self.items(items, &path, file, &dir.join(m.ident.to_string()));
        }
        let name = m.ident.to_string();
        let (child, child_dir) =
            [(dir.join(format!("{name}.rs")), dir.join(&name)), (dir.join(&name).join("mod.rs"), dir.join(&name))]
                .into_iter()
                .find(|(f, _)| f.is_file())
                .ok_or_else(|| {
                    format!("{}: no file for `mod {name};`", self.location(file, m.ident.span().start().line))
                })?;
        let parsed = parse(&child)?;
        if is_test_only(&parsed.attrs) {
            return Ok(());
        }
        self.items(&parsed.items, &path, &child, &child_dir)
    }

    fn items(&mut self, items: &[Item], module: &[String], file: &Path, dir: &Path) -> Result<(), String> {
        for item in items.iter().filter(|i| !is_test_only(attrs(i))) {
            if let Item::Mod(m) = item {
                self.module(m, module, file, dir)?;
                continue;
            }
            let mut refs = Refs { module, found: Vec::new() };
            refs.visit_item(item);
            for (path, line) in refs.found {
                let at = self.location(file, line);
                if let Some(to) = self.top_level(&path) {
                    self.graph.add_edge(&module[0], &to, at.clone());
                }
                self.pending.push((module.to_vec(), path, at));
            }
        }
        Ok(())
    }

    /// The top-level module an absolute path (without `crate`) is in; `None` for the root's own items.
    fn top_level(&self, path: &[String]) -> Option<String> {
        let first = path.first()?;
        if self.top.contains(first) {
            return Some(first.clone());
        }
        self.root_names.get(first).cloned()
    }

    fn location(&self, file: &Path, line: usize) -> Location {
        let file = file.strip_prefix(self.crate_dir).unwrap_or(file);
        Location { file: file.display().to_string(), line }
    }
}

fn parse(file: &PathBuf) -> Result<syn::File, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    syn::parse_file(&text).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}:{}: {e}", file.display(), at.line, at.column + 1)
    })
}

/// The names a root `use` brings in, with the top-level module each comes from (its first
/// segment, after an optional `crate::` or `self::`).
fn root_imports(tree: &UseTree, prefix: &mut Vec<String>, names: &mut BTreeMap<String, String>) {
    let module = |prefix: &[String]| prefix.iter().find(|s| *s != "crate" && *s != "self").cloned();
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            root_imports(&p.tree, prefix, names);
            prefix.pop();
        }
        UseTree::Name(n) => {
            if let Some(m) = module(prefix) {
                names.insert(n.ident.to_string(), m);
            }
        }
        UseTree::Rename(r) => {
            if let Some(m) = module(prefix) {
                names.insert(r.rename.to_string(), m);
            }
        }
        UseTree::Glob(_) => {}
        UseTree::Group(g) => g.items.iter().for_each(|t| root_imports(t, prefix, names)),
    }
}

/// The crate-relative paths one item names, made absolute, each with its line.
struct Refs<'m> {
    module: &'m [String],
    found: Vec<(Vec<String>, usize)>,
}

impl Refs<'_> {
    /// Records `segments` (as written) when it starts at `crate`, `self` or `super`.
    fn path(&mut self, segments: Vec<String>, line: usize) {
        let supers = segments.iter().take_while(|s| *s == "super").count();
        let absolute = match segments.first().map(String::as_str) {
            Some("crate") => segments[1..].to_vec(),
            Some("self") => [self.module, &segments[1..]].concat(),
            Some("super") if supers <= self.module.len() => {
                [&self.module[..self.module.len() - supers], &segments[supers..]].concat()
            }
            _ => return,
        };
        self.found.push((absolute, line));
    }

    fn use_tree(&mut self, tree: &UseTree, prefix: &mut Vec<String>) {
        let leaf = |prefix: &Vec<String>, ident: &syn::Ident| {
            let mut p = prefix.clone();
            // `use super::{self, x}`: `self` is the prefix itself.
            if ident != "self" {
                p.push(ident.to_string());
            }
            (p, ident.span().start().line)
        };
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            UseTree::Name(n) => {
                let (p, line) = leaf(prefix, &n.ident);
                self.path(p, line);
            }
            UseTree::Rename(r) => {
                let (p, line) = leaf(prefix, &r.ident);
                self.path(p, line);
            }
            UseTree::Glob(g) => self.path(prefix.clone(), g.star_token.spans[0].start().line),
            UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(t, prefix)),
        }
    }

    /// `crate::a::b`, `super::x`, `self::y` anywhere in a macro's or an attribute's tokens; with
    /// `strings`, also a string that is such a path and is given to a key (`with = "crate::hex"`).
    fn tokens(&mut self, tokens: TokenStream, strings: bool) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let is_colons = |i: usize| {
            matches!((tokens.get(i), tokens.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
        };
        let after_eq = |i: usize| i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '=');
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => self.tokens(g.stream(), strings),
                TokenTree::Literal(lit) if strings && after_eq(i) => self.string_path(lit),
                TokenTree::Ident(id) if (id == "crate" || id == "self" || id == "super") && is_colons(i + 1) => {
                    let line = id.span().start().line;
                    let mut segments = vec![id.to_string()];
                    while is_colons(i + 1) {
                        let Some(TokenTree::Ident(next)) = tokens.get(i + 3) else { break };
                        segments.push(next.to_string());
                        i += 3;
                    }
                    self.path(segments, line);
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// A string literal that holds a path (`"crate::hex"`), as that path at the literal's line.
    fn string_path(&mut self, lit: &proc_macro2::Literal) {
        let Ok(text) = syn::parse2::<syn::LitStr>(TokenTree::Literal(lit.clone()).into()) else { return };
        if let Ok(path) = syn::parse_str::<syn::Path>(&text.value()) {
            if path.leading_colon.is_none() {
                self.path(path.segments.iter().map(|s| s.ident.to_string()).collect(), lit.span().start().line);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !is_test_only(attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        let attrs = match item {
            ImplItem::Fn(f) => &f.attrs,
            ImplItem::Const(c) => &c.attrs,
            ImplItem::Type(t) => &t.attrs,
            _ => return visit::visit_impl_item(self, item),
        };
        if !is_test_only(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_none() {
            self.use_tree(&item.tree, &mut Vec::new());
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let line = path.segments.first().map_or(0, |s| s.ident.span().start().line);
            self.path(path.segments.iter().map(|s| s.ident.to_string()).collect(), line);
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        self.tokens(mac.tokens.clone(), false);
    }

    /// syn reads only an attribute's own path (`arg`, `serde`); its arguments are tokens.
    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        visit::visit_attribute(self, attr);
        if let Meta::List(list) = &attr.meta {
            self.tokens(list.tokens.clone(), true);
        }
    }
}

fn attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]` or `#[cfg(all(test, …))]`.
fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        let Meta::List(list) = &a.meta else { return false };
        if !list.path.is_ident("cfg") {
            return false;
        }
        let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
        match tokens.as_slice() {
            [TokenTree::Ident(t)] => t == "test",
            [TokenTree::Ident(all), TokenTree::Group(g)] if all == "all" => {
                g.stream().into_iter().any(|t| matches!(t, TokenTree::Ident(ref t) if t == "test"))
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate in a temp folder from `(path, text)` pairs.
    fn write_crate(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn edges(g: &Graph) -> Vec<String> {
        g.edges().map(|(from, to, at)| format!("{from} -> {to} ({at})")).collect()
    }

    #[test]
    fn every_way_of_naming_a_module_is_an_edge_and_tests_are_not() {
        let dir = write_crate(&[
            ("src/lib.rs", "mod a;\npub mod b;\nmod c;\npub mod exit {\n    pub fn f() { crate::a::g(); }\n}\npub use c::Thing;\nfn root() {}\n"),
            // A group with a rename, and a root re-export reached through `crate::Thing`.
            ("src/a.rs", "use crate::{b::X as Y, exit};\n\npub fn g() -> crate::Thing { todo!() }\n"),
            // `super` from a sub-module's file; a path inside a macro; the root's own item is no edge.
            ("src/b/mod.rs", "mod inner;\npub struct X;\nfn h() { crate::root(); }\n"),
            ("src/b/inner.rs", "fn k() {\n    let _ = format!(\"{}\", super::super::c::NAME);\n}\n"),
            // Test-only code reaches anywhere; `self::` stays inside.
            (
                "src/c.rs",
                "pub struct Thing;\npub const NAME: &str = \"\";\nuse self::Thing as T;\n#[cfg(test)]\nmod tests { use crate::a::g; }\n#[cfg(all(test, unix))]\nfn t() { crate::b::X; }\n",
            ),
        ]);
        let g = crate_graph(dir.path()).unwrap();
        assert_eq!(g.modules().collect::<Vec<_>>(), ["a", "b", "c", "exit"]);
        assert_eq!(
            edges(&g),
            [
                "a -> b (src/a.rs:1)",
                "a -> c (src/a.rs:3)",
                "a -> exit (src/a.rs:1)",
                "b -> c (src/b/inner.rs:2)",
                "exit -> a (src/lib.rs:5)",
            ]
        );
        assert_eq!(g.cycles().iter().map(|c| c.name()).collect::<Vec<_>>(), ["a → exit → a"]);
    }

    #[test]
    fn sibling_sub_modules_have_their_own_graph_and_a_parents_item_is_no_edge() {
        let dir = write_crate(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a/mod.rs", "mod x;\nmod y;\nmod z;\npub struct Shared;\n"),
            // x → y and y → x (a cycle); z uses the parent's item only (no edge).
            ("src/a/x.rs", "use super::y::f;\npub fn g() {}\n"),
            ("src/a/y.rs", "pub fn f() { crate::a::x::g(); }\n"),
            ("src/a/z.rs", "use super::Shared;\n"),
            ("src/b.rs", "use crate::a::Shared;\n"),
        ]);
        let graphs = nested_graphs(dir.path()).unwrap();
        assert_eq!(graphs.keys().collect::<Vec<_>>(), ["a"], "b has no sub-modules");
        let g = &graphs["a"];
        assert_eq!(g.modules().collect::<Vec<_>>(), ["x", "y", "z"]);
        assert_eq!(edges(g), ["x -> y (src/a/x.rs:1)", "y -> x (src/a/y.rs:1)"]);
        assert_eq!(g.cycles().iter().map(|c| c.name()).collect::<Vec<_>>(), ["x → y → x"]);
    }

    /// A cycle whose only back-edge is a path inside an attribute's arguments (a clap value
    /// parser, as `cli` once named `setup::pin_arg`) is found; a serde-style string path is an
    /// edge too, while a string that is no key's value (an error message) or a doc comment is not.
    #[test]
    fn a_cycle_closed_inside_an_attribute_is_found() {
        let dir = write_crate(&[
            ("src/lib.rs", "mod cli;\nmod setup;\nmod hex;\nmod wire;\nmod words;\n"),
            (
                "src/cli.rs",
                "#[derive(clap::Args)]\npub struct SetupArgs {\n    #[arg(long, value_parser = crate::setup::pin_arg)]\n    pub pin: String,\n}\n",
            ),
            ("src/setup.rs", "pub fn run(_: &crate::cli::SetupArgs) {}\npub fn pin_arg(s: &str) -> Result<String, String> { Ok(s.into()) }\n"),
            (
                "src/wire.rs",
                "#[derive(serde::Serialize)]\npub struct Frame {\n    #[serde(with = \"crate::hex\")]\n    pub bytes: Vec<u8>,\n}\n",
            ),
            ("src/hex.rs", "pub fn serialize(_: &crate::wire::Frame) {}\n"),
            (
                "src/words.rs",
                "/// crate::cli::SetupArgs\n#[derive(thiserror::Error, Debug)]\n#[error(\"crate::setup failed\")]\n#[doc = \"crate::hex\"]\npub struct E;\n",
            ),
        ]);
        let g = crate_graph(dir.path()).unwrap();
        assert_eq!(
            edges(&g),
            [
                "cli -> setup (src/cli.rs:3)",
                "hex -> wire (src/hex.rs:1)",
                "setup -> cli (src/setup.rs:1)",
                "wire -> hex (src/wire.rs:3)",
            ]
        );
        assert_eq!(g.cycles().iter().map(|c| c.name()).collect::<Vec<_>>(), ["cli → setup → cli", "hex → wire → hex"]);
    }

    #[test]
    fn a_missing_module_file_and_a_syntax_error_are_located() {
        let dir = write_crate(&[("src/lib.rs", "mod a;\n\nmod gone;\n"), ("src/a.rs", "fn f( {}\n")]);
        let e = crate_graph(dir.path()).unwrap_err();
        assert!(e.contains("a.rs:1:"), "{e}");
        let dir = write_crate(&[("src/lib.rs", "mod a;\n\nmod gone;\n"), ("src/a.rs", "")]);
        let e = crate_graph(dir.path()).unwrap_err();
        assert!(e.contains("src/lib.rs:3: no file for `mod gone;`"), "{e}");
    }
}
