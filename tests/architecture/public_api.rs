//! The public API of the library crates, one item per line, compared to the committed listing of
//! each crate (`public-api/<crate>.txt`), so that a change of the API is a visible diff in review.
//!
//! `cargo public-api` and rustdoc's JSON need a nightly toolchain, which the build machines do not
//! have; the sources read with syn (already this test's dependency) give the same listing on
//! stable, without resolving types: signatures are as written, and a re-export is listed as
//! written and, when it names an item of a private module, with that item's own lines.
//!
//! What is listed: every `pub` item reachable from `src/lib.rs` through `pub mod`s (files, inline
//! modules and `#[path]`), with its signature (functions), its `pub` fields (structs), its variants
//! (enums), its items (traits), its type (consts, statics); `pub use` as written; the `pub`
//! methods and the trait impls of the listed types wherever they are written; and the
//! attributes a user depends on (`derive`, `non_exhaustive`, `cfg` ...). `#[cfg(test)]` is left
//! out. Bless a deliberate change with `LAUNCH_BLESS_API=1`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::{Attribute, Fields, ImplItem, Item, Meta, Signature, TraitItem, UseTree, Visibility};

/// The crate in `crate_dir`, named `name`, as its sorted lines.
pub fn listing(crate_dir: &Path, name: &str) -> Result<Vec<String>, String> {
    let root = crate_dir.join("src/lib.rs");
    let mut modules = Vec::new();
    load(&root, Vec::new(), parse(&root)?.1, &source(&root)?, ModuleInfo::root(), &mut modules)?;
    let crate_ = Crate { name: name.replace('-', "_"), modules };
    Ok(crate_.lines().into_iter().collect())
}

/// The lines only in `expected` (`-`) and only in `actual` (`+`), in the listing's order.
pub fn diff(expected: &[String], actual: &[String]) -> String {
    let (old, new): (BTreeSet<&String>, BTreeSet<&String>) = (expected.iter().collect(), actual.iter().collect());
    let mut all: Vec<(&String, char)> = old.difference(&new).map(|l| (*l, '-')).collect();
    all.extend(new.difference(&old).map(|l| (*l, '+')));
    all.sort();
    all.into_iter().map(|(line, sign)| format!("{sign}{line}\n")).collect()
}

fn source(file: &Path) -> Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))
}

fn parse(file: &Path) -> Result<(String, Vec<Item>), String> {
    let text = source(file)?;
    let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok((text, parsed.items))
}

/// One module: its path below the crate root, its items and the text their spans point into.
struct Module {
    path: Vec<String>,
    info: ModuleInfo,
    text: String,
    items: Vec<Item>,
}

/// What the declaration of a module says about it.
#[derive(Clone)]
struct ModuleInfo {
    /// Reachable from the root through `pub mod`s only.
    public: bool,
    /// Declared `pub mod`.
    declared_pub: bool,
    /// Its `cfg` attributes, as written.
    cfg: Vec<String>,
}

impl ModuleInfo {
    fn root() -> ModuleInfo {
        ModuleInfo { public: true, declared_pub: true, cfg: Vec::new() }
    }
}

/// Reads module `path` (declared in `file`, items `items`), then its sub-modules; `modules`
/// receives each, the module before its sub-modules.
fn load(
    file: &Path,
    path: Vec<String>,
    items: Vec<Item>,
    text: &str,
    info: ModuleInfo,
    modules: &mut Vec<Module>,
) -> Result<(), String> {
    // Sub-module files: next to lib.rs and mod.rs, else in the folder named as the file.
    let dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "mod.rs") => file.parent().map_or_else(PathBuf::new, Path::to_path_buf),
        _ => file.with_extension(""),
    };
    let mut own = Vec::new();
    let mut children = Vec::new();
    for item in items {
        match item {
            Item::Mod(m) if !is_test_only(&m.attrs) => children.push(m),
            other if is_test_only(parts(&other).0) => {}
            other => own.push(other),
        }
    }
    modules.push(Module { path: path.clone(), info: info.clone(), text: text.to_string(), items: own });
    for m in children {
        let mut child = path.clone();
        child.push(m.ident.to_string());
        let info = ModuleInfo {
            public: info.public && is_pub(&m.vis),
            declared_pub: is_pub(&m.vis),
            cfg: m.attrs.iter().filter(|a| a.path().is_ident("cfg")).map(|a| attribute(text, a)).collect(),
        };
        if let Some((_, items)) = m.content {
            // An inline module's sub-modules are in the folder named as it.
            load(&dir.join(m.ident.to_string()).join("mod.rs"), child, items, text, info, modules)?;
            continue;
        }
        let written = m.attrs.iter().find_map(|a| match &a.meta {
            Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        let sub = match written {
            Some(p) => file.parent().unwrap_or(Path::new(".")).join(p),
            None => {
                let flat = dir.join(format!("{}.rs", m.ident));
                if flat.is_file() {
                    flat
                } else {
                    dir.join(m.ident.to_string()).join("mod.rs")
                }
            }
        };
        let (sub_text, items) = parse(&sub)?;
        load(&sub, child, items, &sub_text, info, modules)?;
    }
    Ok(())
}

/// A crate's modules, read.
struct Crate {
    /// As code names it: `launch_build`.
    name: String,
    modules: Vec<Module>,
}

/// Where things are reachable from outside: each module's public path (`launch::cuda`) where it
/// has one, and each item of a private module that a public one re-exports, with its public path.
#[derive(Default)]
struct Reach {
    modules: BTreeMap<Vec<String>, String>,
    items: BTreeMap<(Vec<String>, String), String>,
}

/// What a `pub use` names: a module, or an item of a module (by name).
enum Target {
    Module(Vec<String>),
    Item(Vec<String>, String),
}

/// The public path of each listed type, by its definition (module, name): where its impls go.
type Types = BTreeMap<(Vec<String>, String), String>;

impl Crate {
    fn module(&self, path: &[String]) -> Option<&Module> {
        self.modules.iter().find(|m| m.path == path)
    }

    /// Every line of the listing.
    fn lines(&self) -> BTreeSet<String> {
        let reach = self.reach();
        let mut out = BTreeSet::new();
        let mut types = Types::new();
        for m in &self.modules {
            let Some(at) = reach.modules.get(&m.path) else { continue };
            if let Some(name) = m.path.last() {
                let cfg: String = m.info.cfg.iter().map(|c| format!("{c} ")).collect();
                out.insert(format!("{at}  {cfg}pub mod {name}"));
            }
            for item in &m.items {
                let path = item_name(item).map_or_else(|| at.clone(), |name| format!("{at}::{name}"));
                self.item(m, item, &path, &mut out, &mut types);
            }
        }
        for ((module, name), at) in &reach.items {
            let m = self.module(module).expect("resolved to a module");
            for item in m.items.iter().filter(|i| item_name(i).as_deref() == Some(name)) {
                self.item(m, item, at, &mut out, &mut types);
            }
        }
        self.impls(&types, &mut out);
        out
    }

    /// The public modules, then what their `pub use`s reach in private modules (a re-exported
    /// private module counts as public, under its new name), until nothing new is reached.
    fn reach(&self) -> Reach {
        let mut reach = Reach::default();
        for m in self.modules.iter().filter(|m| m.info.public) {
            let path: String = m.path.iter().map(|s| format!("::{s}")).collect();
            reach.modules.insert(m.path.clone(), format!("{}{path}", self.name));
        }
        loop {
            let before = (reach.modules.len(), reach.items.len());
            for m in &self.modules {
                let Some(at) = reach.modules.get(&m.path).cloned() else { continue };
                for item in &m.items {
                    let Item::Use(u) = item else { continue };
                    if !is_pub(&u.vis) {
                        continue;
                    }
                    let mut leaves = Vec::new();
                    use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                    for (segments, name, alias) in leaves {
                        if let Some(target) = self.resolve(&m.path, &segments, &name, 0) {
                            self.publish(target, &format!("{at}::{alias}"), &mut reach);
                        }
                    }
                }
            }
            if before == (reach.modules.len(), reach.items.len()) {
                return reach;
            }
        }
    }

    /// What `segments::name`, written in module `from`, names in this crate (`None`: another
    /// crate's). A re-export of a re-export is followed.
    fn resolve(&self, from: &[String], segments: &[String], name: &str, depth: usize) -> Option<Target> {
        let mut path = match segments.first().map(String::as_str) {
            Some("crate") => segments[1..].to_vec(),
            Some("self") => [from, &segments[1..]].concat(),
            Some("super") => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                [&from[..from.len().checked_sub(ups)?], &segments[ups..]].concat()
            }
            _ => [from, segments].concat(),
        };
        if name == "self" {
            return self.module(&path).map(|_| Target::Module(path));
        }
        path.push(name.to_string());
        if self.module(&path).is_some() {
            return Some(Target::Module(path));
        }
        path.pop();
        let m = self.module(&path)?;
        if m.items.iter().any(|i| !matches!(i, Item::Use(_)) && item_name(i).as_deref() == Some(name)) {
            return Some(Target::Item(path, name.to_string()));
        }
        if depth > 4 {
            return None;
        }
        m.items.iter().find_map(|i| {
            let Item::Use(u) = i else { return None };
            let mut leaves = Vec::new();
            use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
            let (segments, original, _) = leaves.into_iter().find(|(_, _, alias)| alias == name)?;
            self.resolve(&m.path, &segments, &original, depth + 1)
        })
    }

    /// Records what a re-export reaches under `at`, unless it is public already.
    fn publish(&self, target: Target, at: &str, reach: &mut Reach) {
        match target {
            Target::Module(path) if !reach.modules.contains_key(&path) => {
                // Its `pub mod`s come along.
                for m in self.modules.iter().filter(|m| m.path.starts_with(&path)) {
                    let public = (path.len() + 1..=m.path.len())
                        .all(|n| self.module(&m.path[..n]).is_some_and(|d| d.info.declared_pub));
                    if public {
                        let below: String = m.path[path.len()..].iter().map(|s| format!("::{s}")).collect();
                        reach.modules.entry(m.path.clone()).or_insert_with(|| format!("{at}{below}"));
                    }
                }
            }
            Target::Item(module, name) if !reach.modules.contains_key(&module) => {
                reach.items.entry((module, name)).or_insert_with(|| at.to_string());
            }
            _ => {}
        }
    }

    /// The lines of `item`, written in `m`, reachable as `path` (a `use`: in module `path`).
    fn item(&self, m: &Module, item: &Item, path: &str, out: &mut BTreeSet<String>, types: &mut Types) {
        let t = m.text.as_str();
        let (attrs, vis) = parts(item);
        let attrs = kept(t, attrs);
        let mut put = |path: String, text: String| out.insert(format!("{path}  {attrs}{text}"));
        let from = match vis {
            Some(Visibility::Public(p)) => p.span,
            _ => {
                if let Item::Macro(mac) = item {
                    if mac.attrs.iter().any(|a| a.path().is_ident("macro_export")) {
                        let name = mac.ident.as_ref().map(ToString::to_string).unwrap_or_default();
                        put(format!("{}::{name}", self.name), format!("macro_rules! {name}"));
                    }
                }
                return;
            }
        };
        let Some(name) = item_name(item) else {
            if let Item::Use(u) = item {
                // rustfmt writes a group on one line as `{a, b}`.
                let text = between(t, from, u.semi_token.spans[0]).replace("{ ", "{").replace(" }", "}");
                put(path.to_string(), text);
            }
            return;
        };
        let path = path.to_string();
        match item {
            Item::Fn(f) => {
                put(path, between(t, from, f.block.brace_token.span.open()));
            }
            Item::Struct(s) => {
                types.insert((m.path.clone(), name), path.clone());
                match &s.fields {
                    Fields::Named(f) => {
                        put(path.clone(), between(t, from, f.brace_token.span.open()));
                        fields(t, &path, &f.named, f.brace_token.span.close(), out);
                    }
                    Fields::Unnamed(f) => {
                        let each = tuple_fields(t, &f.unnamed, f.paren_token.span.close());
                        put(path, format!("{}({each})", between(t, from, f.paren_token.span.open())));
                    }
                    Fields::Unit => {
                        let end = s.semi_token.as_ref().map_or(s.ident.span(), |s| s.spans[0]);
                        put(path, between(t, from, end));
                    }
                }
            }
            Item::Union(u) => {
                types.insert((m.path.clone(), name), path.clone());
                put(path.clone(), between(t, from, u.fields.brace_token.span.open()));
                fields(t, &path, &u.fields.named, u.fields.brace_token.span.close(), out);
            }
            Item::Enum(e) => {
                types.insert((m.path.clone(), name), path.clone());
                put(path.clone(), between(t, from, e.brace_token.span.open()));
                for pair in e.variants.pairs() {
                    let v = pair.value();
                    let end = pair.punct().map_or(e.brace_token.span.close(), |c| c.spans[0]);
                    let text = format!("{}variant {}", kept(t, &v.attrs), between(t, v.ident.span(), end));
                    out.insert(format!("{path}::{}  {text}", v.ident));
                }
            }
            Item::Trait(tr) => {
                types.insert((m.path.clone(), name), path.clone());
                put(path.clone(), between(t, from, tr.brace_token.span.open()));
                for ti in &tr.items {
                    let (name, attrs, text) = match ti {
                        TraitItem::Fn(f) => {
                            let end = f.default.as_ref().map_or_else(
                                || f.semi_token.as_ref().map_or(f.sig.ident.span(), |s| s.spans[0]),
                                |b| b.brace_token.span.open(),
                            );
                            (f.sig.ident.to_string(), &f.attrs, between(t, sig_start(&f.sig), end))
                        }
                        TraitItem::Type(ty) => {
                            (ty.ident.to_string(), &ty.attrs, between(t, ty.type_token.span, ty.semi_token.spans[0]))
                        }
                        TraitItem::Const(c) => {
                            let end = c.default.as_ref().map_or(c.semi_token.spans[0], |(eq, _)| eq.spans[0]);
                            (c.ident.to_string(), &c.attrs, between(t, c.const_token.span, end))
                        }
                        _ => continue,
                    };
                    out.insert(format!("{path}::{name}  {}{text}", kept(t, attrs)));
                }
            }
            Item::Const(c) => {
                put(path, between(t, from, c.eq_token.spans[0]));
            }
            Item::Static(s) => {
                put(path, between(t, from, s.eq_token.spans[0]));
            }
            Item::Type(ty) => {
                types.insert((m.path.clone(), name), path.clone());
                put(path, between(t, from, ty.semi_token.spans[0]));
            }
            _ => {
                put(path, "(an item this listing does not read)".to_string());
            }
        };
    }

    /// The trait impls and the `pub` methods and consts of the listed types, wherever written.
    fn impls(&self, types: &Types, out: &mut BTreeSet<String>) {
        for m in &self.modules {
            for item in &m.items {
                let Item::Impl(imp) = item else { continue };
                let Some(path) = self.self_type(&m.path, &imp.self_ty).and_then(|d| types.get(&d)) else {
                    continue;
                };
                let t = m.text.as_str();
                let from = imp.unsafety.as_ref().map_or(imp.impl_token.span, |u| u.span);
                let header = between(t, from, imp.brace_token.span.open());
                if imp.trait_.is_some() {
                    out.insert(format!("{path}  {}{header}", kept(t, &imp.attrs)));
                    continue;
                }
                for ii in &imp.items {
                    let (name, attrs, text) = match ii {
                        ImplItem::Fn(f) => match &f.vis {
                            Visibility::Public(p) => {
                                (&f.sig.ident, &f.attrs, between(t, p.span, f.block.brace_token.span.open()))
                            }
                            _ => continue,
                        },
                        ImplItem::Const(c) => match &c.vis {
                            Visibility::Public(p) => (&c.ident, &c.attrs, between(t, p.span, c.eq_token.spans[0])),
                            _ => continue,
                        },
                        _ => continue,
                    };
                    out.insert(format!("{path}::{name}  {}{text}", kept(t, attrs)));
                }
            }
        }
    }

    /// The definition (module, name) an impl in module `at` is for: of the types of that name,
    /// the one defined in `at` or the nearest module above it, else the only one in the crate.
    fn self_type(&self, at: &[String], ty: &syn::Type) -> Option<(Vec<String>, String)> {
        let syn::Type::Path(p) = ty else { return None };
        let name = p.path.segments.last()?.ident.to_string();
        let defined: Vec<&Vec<String>> = self
            .modules
            .iter()
            .filter(|m| m.items.iter().any(|i| !matches!(i, Item::Use(_)) && item_name(i).as_deref() == Some(&name)))
            .map(|m| &m.path)
            .collect();
        let nearest = defined.iter().filter(|d| at.starts_with(d)).max_by_key(|d| d.len());
        let module = match (nearest, defined.as_slice()) {
            (Some(d), _) | (None, [d]) => (*d).clone(),
            _ => return None,
        };
        Some((module, name))
    }
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// `#[cfg(test)]`.
fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        Meta::List(l) => l.path.is_ident("cfg") && l.tokens.to_string() == "test",
        _ => false,
    })
}

/// An item's attributes and, for an item that has one, its visibility.
fn parts(item: &Item) -> (&[Attribute], Option<&Visibility>) {
    match item {
        Item::Const(i) => (&i.attrs, Some(&i.vis)),
        Item::Enum(i) => (&i.attrs, Some(&i.vis)),
        Item::ExternCrate(i) => (&i.attrs, Some(&i.vis)),
        Item::Fn(i) => (&i.attrs, Some(&i.vis)),
        Item::Mod(i) => (&i.attrs, Some(&i.vis)),
        Item::Static(i) => (&i.attrs, Some(&i.vis)),
        Item::Struct(i) => (&i.attrs, Some(&i.vis)),
        Item::Trait(i) => (&i.attrs, Some(&i.vis)),
        Item::TraitAlias(i) => (&i.attrs, Some(&i.vis)),
        Item::Type(i) => (&i.attrs, Some(&i.vis)),
        Item::Union(i) => (&i.attrs, Some(&i.vis)),
        Item::Use(i) => (&i.attrs, Some(&i.vis)),
        Item::ForeignMod(i) => (&i.attrs, None),
        Item::Impl(i) => (&i.attrs, None),
        Item::Macro(i) => (&i.attrs, None),
        _ => (&[], None),
    }
}

/// The name an item declares (`None` for impls, uses, ...).
fn item_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Mod(i) => &i.ident,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Each name a `use` tree brings in: (the path before it, its name, the name it is given).
fn use_leaves(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String, String)>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => out.push((prefix.clone(), n.ident.to_string(), n.ident.to_string())),
        UseTree::Rename(r) => out.push((prefix.clone(), r.ident.to_string(), r.rename.to_string())),
        UseTree::Group(g) => g.items.iter().for_each(|t| use_leaves(t, prefix, out)),
        _ => {}
    }
}

/// Each `pub` named field of a struct at `path`, a line each.
fn fields(
    text: &str,
    path: &str,
    named: &Punctuated<syn::Field, syn::Token![,]>,
    close: Span,
    out: &mut BTreeSet<String>,
) {
    for pair in named.pairs() {
        let f = pair.value();
        let (Visibility::Public(p), Some(ident)) = (&f.vis, &f.ident) else { continue };
        let end = pair.punct().map_or(close, |c| c.spans[0]);
        out.insert(format!("{path}::{ident}  {}{}", kept(text, &f.attrs), between(text, p.span, end)));
    }
}

/// A tuple struct's fields, `_` for a private one: `pub u64, _`.
fn tuple_fields(text: &str, unnamed: &Punctuated<syn::Field, syn::Token![,]>, close: Span) -> String {
    let each: Vec<String> = unnamed
        .pairs()
        .map(|pair| match &pair.value().vis {
            Visibility::Public(p) => between(text, p.span, pair.punct().map_or(close, |c| c.spans[0])),
            _ => "_".to_string(),
        })
        .collect();
    each.join(", ")
}

/// Where a signature starts: its first qualifier, or `fn`.
fn sig_start(sig: &Signature) -> Span {
    let mut spans = vec![sig.fn_token.span];
    spans.extend(sig.constness.as_ref().map(|t| t.span));
    spans.extend(sig.asyncness.as_ref().map(|t| t.span));
    spans.extend(sig.abi.as_ref().map(|a| a.extern_token.span));
    match &sig.safety {
        syn::Safety::Unsafe(t) => spans.push(t.span),
        syn::Safety::Safe(t) => spans.push(t.span),
        _ => {}
    }
    spans.into_iter().min_by_key(|s| s.byte_range().start).expect("fn is there")
}

/// The attributes a user of the item depends on, as written, each followed by a space.
fn kept(text: &str, attrs: &[Attribute]) -> String {
    const KEPT: [&str; 7] = ["derive", "non_exhaustive", "cfg", "cfg_attr", "repr", "deprecated", "must_use"];
    attrs
        .iter()
        .filter(|a| KEPT.iter().any(|k| a.path().is_ident(k)) || is_hidden(a))
        .map(|a| format!("{} ", attribute(text, a)))
        .collect()
}

/// `#[doc(hidden)]`.
fn is_hidden(a: &Attribute) -> bool {
    matches!(&a.meta, Meta::List(l) if l.path.is_ident("doc") && l.tokens.to_string() == "hidden")
}

/// An attribute as written, its white space collapsed.
fn attribute(text: &str, a: &Attribute) -> String {
    let range = a.pound_token.spans[0].byte_range().start..a.bracket_token.span.close().byte_range().end;
    text[range].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The source from `from` up to (not including) `to`, without comments or attributes, on one
/// line: how it is wrapped and commented is not the API.
fn between(text: &str, from: Span, to: Span) -> String {
    let (a, b) = (from.byte_range().start, to.byte_range().start);
    normalize(text.get(a..b.max(a)).unwrap_or(""))
}

/// `s` without `//` and `/* */` comments and `#[...]` attributes, on one line, spaced as
/// rustfmt spaces it on one line (no trailing comma, no space inside brackets).
fn normalize(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                chars.by_ref().take_while(|c| *c != '\n').for_each(drop);
                out.push(' ');
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            ('#', Some('[' | '!')) => {
                let mut depth = 0;
                for c in chars.by_ref() {
                    match c {
                        '[' => depth += 1,
                        ']' if depth == 1 => break,
                        ']' => depth -= 1,
                        _ => {}
                    }
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    let mut one = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for (from, to) in [
        ("( ", "("),
        (" )", ")"),
        (",)", ")"),
        ("[ ", "["),
        (" ]", "]"),
        (",]", "]"),
        (", }", " }"),
        (",>", ">"),
        (" ,", ","),
    ] {
        one = one.replace(from, to);
    }
    one.trim_end_matches(',').trim().to_string()
}

/// The crates whose API is listed.
const LIBRARIES: [&str; 2] = ["launch", "launch-build"];

/// How to accept a deliberate change.
const BLESS: &str = "LAUNCH_BLESS_API=1 cargo test -p launch-tests --test architecture public_api";

fn snapshot(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("architecture/public-api").join(format!("{name}.txt"))
}

/// Each library's public API is the committed listing; `LAUNCH_BLESS_API=1` writes it instead.
#[test]
fn the_public_api_is_the_committed_one() {
    let bless = launch_build::tooling::Env::cli().flag("LAUNCH_BLESS_API");
    let mut changed = String::new();
    for name in LIBRARIES {
        let actual = listing(&crate::crate_dir(name), name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let file = snapshot(name);
        if bless {
            let header = format!("# The public API of `{name}`, one item per line (tests/architecture/public_api.rs).\n# After a deliberate change: {BLESS}\n");
            std::fs::write(&file, header + &actual.join("\n") + "\n")
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            continue;
        }
        let committed = std::fs::read_to_string(&file).unwrap_or_default();
        let expected: Vec<String> = committed.lines().filter(|l| !l.starts_with('#')).map(String::from).collect();
        if expected != actual {
            changed.push_str(&format!("--- {}\n+++ {name} now\n{}", file.display(), diff(&expected, &actual)));
        }
    }
    assert!(
        changed.is_empty(),
        "the public API changed; if that is meant, run `{BLESS}` and commit the listing:\n{changed}"
    );
}

/// The listing reads what matters: a known line of each kind is there.
#[test]
fn the_listing_holds_each_kind_of_item() {
    let launch = listing(&crate::crate_dir("launch"), "launch").unwrap();
    let build = listing(&crate::crate_dir("launch-build"), "launch-build").unwrap();
    let expected = [
        (&launch, "launch::cuda  #[cfg(feature = \"cudarc\")] pub mod cuda"),
        (&launch, "launch::include_kernels  macro_rules! include_kernels"),
        (&launch, "launch::tune::TuneKey::problem  pub problem: String"),
        (&launch, "launch::cuda::check_launch  pub fn check_launch(kernel: &str, arch: &str, dev: &DeviceInfo, contract: Option<&Contract>, func: &FunctionInfo, cfg: &LaunchConfig) -> Result<Approval, LaunchError>"),
        (&build, "launch_build::tooling::Env::flag  pub fn flag(&self, name: &str) -> bool"),
        (&build, "launch_build::error::ErrorKind::Toolchain  variant Toolchain"),
    ];
    for (lines, line) in expected {
        assert!(lines.iter().any(|l| l == line), "`{line}` is not in the listing:\n{}", lines.join("\n"));
    }
    let error = build.iter().find(|l| l.starts_with("launch_build::error::Error  ")).expect("the error enum");
    assert!(error.contains("#[non_exhaustive] pub enum Error"), "{error}");
    assert!(!build.iter().any(|l| l.contains("build_with")), "a private function is not listed");
}

/// A planted change shows: a function added to a public module, a method to a re-exported type
/// of a private module, a field made private.
#[test]
fn the_listing_sees_a_planted_change() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("inner")).unwrap();
    let write = |file: &str, text: &str| std::fs::write(src.join(file), text).unwrap();
    write(
        "lib.rs",
        "pub mod shown;\nmod inner;\npub use inner::Thing;\n#[cfg(test)]\nmod tests {\n    pub fn no() {}\n}\n",
    );
    write("inner/mod.rs", "pub struct Thing {\n    pub size: u32,\n}\nimpl Thing {\n    pub fn new() -> Thing { Thing { size: 0 } }\n    fn hidden(&self) {}\n}\n");
    write("shown.rs", "/// Doc.\npub fn one(\n    x: u32, // why\n) -> u32 {\n    x\n}\nfn private() {}\n");
    let before = listing(dir.path(), "planted").unwrap();
    assert_eq!(
        before,
        [
            "planted  pub use inner::Thing",
            "planted::Thing  pub struct Thing",
            "planted::Thing::new  pub fn new() -> Thing",
            "planted::Thing::size  pub size: u32",
            "planted::shown  pub mod shown",
            "planted::shown::one  pub fn one(x: u32) -> u32",
        ]
    );
    write("shown.rs", "pub fn one(x: u32) -> u32 {\n    x\n}\npub fn two() {}\n");
    write("inner/mod.rs", "#[non_exhaustive]\npub struct Thing {\n    size: u32,\n}\nimpl Thing {\n    pub fn new() -> Thing { Thing { size: 0 } }\n    pub fn size(&self) -> u32 { self.size }\n}\n");
    let after = listing(dir.path(), "planted").unwrap();
    assert_eq!(
        diff(&before, &after),
        "+planted::Thing  #[non_exhaustive] pub struct Thing\n\
         -planted::Thing  pub struct Thing\n\
         +planted::Thing::size  pub fn size(&self) -> u32\n\
         -planted::Thing::size  pub size: u32\n\
         +planted::shown::two  pub fn two()\n"
    );
}
