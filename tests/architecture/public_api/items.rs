//! A crate's public items, from its modules: what is reachable from outside, and each item's lines.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::{Fields, ImplItem, Item, TraitItem, Visibility};

use super::modules::{is_pub, item_name, parts, use_leaves, Module};
use super::text::{between, kept, sig_start};

/// A crate's modules, read.
pub(super) struct Crate {
    /// As code names it: `launch_build`.
    pub(super) name: String,
    pub(super) modules: Vec<Module>,
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
    pub(super) fn lines(&self) -> BTreeSet<String> {
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
                trait_items(t, &path, tr, out);
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

/// Each item of trait `tr` at `path`, a line each.
fn trait_items(t: &str, path: &str, tr: &syn::ItemTrait, out: &mut BTreeSet<String>) {
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
