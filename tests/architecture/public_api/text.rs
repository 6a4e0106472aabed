//! The source text of an item, as the listing shows it: from one token to another, without
//! comments, attributes or line breaks.

use proc_macro2::Span;
use syn::{Attribute, Meta, Signature};

/// Where a signature starts: its first qualifier, or `fn`.
pub(super) fn sig_start(sig: &Signature) -> Span {
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
pub(super) fn kept(text: &str, attrs: &[Attribute]) -> String {
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
pub(super) fn attribute(text: &str, a: &Attribute) -> String {
    let range = a.pound_token.spans[0].byte_range().start..a.bracket_token.span.close().byte_range().end;
    text[range].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The source from `from` up to (not including) `to`, without comments or attributes, on one
/// line: how it is wrapped and commented is not the API.
pub(super) fn between(text: &str, from: Span, to: Span) -> String {
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
