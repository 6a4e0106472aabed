//! The modules of a crate, read from its files with syn, and what the listing asks of an item.

use std::path::{Path, PathBuf};

use syn::{Attribute, Item, Meta, UseTree, Visibility};

use super::text::attribute;

fn source(file: &Path) -> Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))
}

pub(super) fn parse(file: &Path) -> Result<(String, Vec<Item>), String> {
    let text = source(file)?;
    let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok((text, parsed.items))
}

/// One module: its path below the crate root, its items and the text their spans point into.
pub(super) struct Module {
    pub(super) path: Vec<String>,
    pub(super) info: ModuleInfo,
    pub(super) text: String,
    pub(super) items: Vec<Item>,
}

/// What the declaration of a module says about it.
#[derive(Clone)]
pub(super) struct ModuleInfo {
    /// Reachable from the root through `pub mod`s only.
    pub(super) public: bool,
    /// Declared `pub mod`.
    pub(super) declared_pub: bool,
    /// Its `cfg` attributes, as written.
    pub(super) cfg: Vec<String>,
}

impl ModuleInfo {
    pub(super) fn root() -> ModuleInfo {
        ModuleInfo { public: true, declared_pub: true, cfg: Vec::new() }
    }
}

/// Reads module `path` (declared in `file`, items `items`), then its sub-modules; `modules`
/// receives each, the module before its sub-modules.
pub(super) fn load(
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

pub(super) fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// `#[cfg(test)]`.
pub(super) fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| match &a.meta {
        Meta::List(l) => l.path.is_ident("cfg") && l.tokens.to_string() == "test",
        _ => false,
    })
}

/// An item's attributes and, for an item that has one, its visibility.
pub(super) fn parts(item: &Item) -> (&[Attribute], Option<&Visibility>) {
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
pub(super) fn item_name(item: &Item) -> Option<String> {
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
pub(super) fn use_leaves(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String, String)>) {
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
