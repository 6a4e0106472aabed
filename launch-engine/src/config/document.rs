//! The Cargo.toml being validated, walked by hand: every error names the full key path
//! (`package.metadata.launch.arch[1]`), the position of the value, the value as written and what
//! is expected in TOML terms. The readers of TOML's own types; the readers of launch's settings
//! are in `values`.

use std::ops::Range;
use std::path::Path;

use toml_edit::{Item, Key, TableLike, Value};

use crate::error::{Error, Location};
use crate::suggest::edit_distance;

/// The manifest being validated: where errors point.
pub(super) struct Doc<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

/// A value of the document with its dotted key path and position.
pub(super) struct Node<'a> {
    /// `package.metadata.launch.arch[1]`.
    pub(super) path: String,
    /// Byte range of the value (or of its key or header when the value has none).
    pub(super) span: Option<Range<usize>>,
    pub(super) r: Ref<'a>,
}

#[derive(Clone, Copy)]
pub(super) enum Ref<'a> {
    Value(&'a Value),
    Table(&'a toml_edit::Table),
    Tables,
}

impl<'a> Node<'a> {
    pub(super) fn clone_node(&self) -> Node<'a> {
        Node { path: self.path.clone(), span: self.span.clone(), r: self.r }
    }

    /// The entry `key = item` of this table.
    pub(super) fn entry(&self, key: &'a Key, item: &'a Item) -> Option<Node<'a>> {
        let r = match item {
            Item::Value(v) => Ref::Value(v),
            Item::Table(t) => Ref::Table(t),
            Item::ArrayOfTables(_) => Ref::Tables,
            Item::None => return None,
        };
        let segment = quoted_key(key.get());
        let path = if self.path.is_empty() { segment } else { format!("{}.{segment}", self.path) };
        Some(Node { path, span: item.span().or_else(|| key.span()), r })
    }

    /// The entry `name` of `table` (this node's table).
    pub(super) fn child_in(&self, table: &'a dyn TableLike, name: &str) -> Option<Node<'a>> {
        table.get_key_value(name).and_then(|(k, i)| self.entry(k, i))
    }

    /// What kind of TOML value this is, in words.
    pub(super) fn kind(&self) -> &'static str {
        match self.r {
            Ref::Value(Value::String(_)) => "a string",
            Ref::Value(Value::Integer(_)) => "an integer",
            Ref::Value(Value::Float(_)) => "a floating-point number",
            Ref::Value(Value::Boolean(_)) => "a boolean",
            Ref::Value(Value::Datetime(_)) => "a date-time",
            Ref::Value(Value::Array(_)) => "a list",
            Ref::Value(Value::InlineTable(_)) | Ref::Table(_) => "a table",
            Ref::Tables => "a list of tables",
        }
    }
}

impl Doc<'_> {
    pub(super) fn error(&self, span: Option<Range<usize>>, key: &str, message: String) -> Error {
        Error::Config { location: location(self.path, self.text, span), key: key.to_string(), message }
    }

    /// The value as written in the file, on one line and cut short if long.
    pub(super) fn shown(&self, node: &Node) -> String {
        let written = match node.r {
            Ref::Value(v) => v.span().and_then(|s| self.text.get(s)),
            Ref::Table(_) => return format!("[{}]", node.path),
            Ref::Tables => return format!("[[{}]]", node.path),
        };
        let Some(written) = written else { return "the value".to_string() };
        let one_line = written.split_whitespace().collect::<Vec<_>>().join(" ");
        match one_line.char_indices().nth(60) {
            Some((cut, _)) => format!("{} …", &one_line[..cut]),
            None => one_line,
        }
    }

    /// `"x" is a string; expected an integer from 1 to 1024`.
    pub(super) fn wrong_type(&self, node: &Node, expected: &str) -> Error {
        self.error(
            node.span.clone(),
            &node.path,
            format!("{} is {}; expected {expected}", self.shown(node), node.kind()),
        )
    }

    pub(super) fn table<'n>(&self, node: &Node<'n>, expected: &str) -> Result<&'n dyn TableLike, Error> {
        match node.r {
            Ref::Table(t) => Ok(t),
            Ref::Value(Value::InlineTable(t)) => Ok(t),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    /// The elements of a list, each with its index in the key path.
    pub(super) fn array<'n>(&self, node: &Node<'n>, expected: &str) -> Result<Vec<Node<'n>>, Error> {
        let Ref::Value(Value::Array(a)) = node.r else { return Err(self.wrong_type(node, expected)) };
        Ok(a.iter()
            .enumerate()
            .map(|(i, v)| Node { path: format!("{}[{i}]", node.path), span: v.span(), r: Ref::Value(v) })
            .collect())
    }

    pub(super) fn string<'n>(&self, node: &Node<'n>, expected: &str) -> Result<&'n str, Error> {
        match node.r {
            Ref::Value(Value::String(s)) => Ok(s.value()),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    pub(super) fn integer(&self, node: &Node, expected: &str) -> Result<i64, Error> {
        match node.r {
            Ref::Value(Value::Integer(i)) => Ok(*i.value()),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    pub(super) fn boolean(&self, node: &Node, expected: &str) -> Result<bool, Error> {
        match node.r {
            Ref::Value(Value::Boolean(b)) => Ok(*b.value()),
            _ => Err(self.wrong_type(node, expected)),
        }
    }

    /// A list of strings, each with its node.
    pub(super) fn strings<'n>(&self, list: &Node<'n>, expected: &str) -> Result<Vec<(Node<'n>, &'n str)>, Error> {
        let items = self.array(list, expected)?;
        let mut out = Vec::new();
        for item in items {
            let s = self.string(&item, "a string, one option per element, such as \"-std=c++17\"")?;
            out.push((item, s));
        }
        Ok(out)
    }

    /// Every key of `table` is one of `keys`; else an error at the first stranger.
    pub(super) fn known_keys(
        &self,
        node: &Node,
        table: &dyn TableLike,
        keys: &[super::Key],
        what: &str,
    ) -> Result<(), Error> {
        let keys = super::keys::names(keys);
        for (name, item) in table.iter() {
            if keys.contains(&name) {
                continue;
            }
            let key = table.key(name);
            let span = key.and_then(Key::span).or_else(|| item.span());
            let hint = closest_key(name, &keys).map(|k| format!(" (did you mean `{k}`?)")).unwrap_or_default();
            return Err(self.error(
                span,
                &format!("{}.{}", node.path, quoted_key(name)),
                format!("unknown key `{name}`{hint}; the keys {what} accepts: {}", keys.join(", ")),
            ));
        }
        Ok(())
    }

    /// A document that is not TOML (cargo refuses it first; this is for direct callers).
    pub(super) fn syntax_error(&self, e: &toml_edit::TomlError) -> Error {
        let span = e.span();
        let key = span.as_ref().map_or_else(|| "Cargo.toml".to_string(), |s| key_at(self.text, s.start));
        let lines: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let mut message = format!("invalid TOML: {}", lines.join("; "));
        // The token at the error, as written (the span may cover only its first character).
        let rest = span.as_ref().and_then(|s| self.text.get(s.start..)).unwrap_or("");
        let token: String = rest.chars().take_while(|c| !c.is_whitespace() && !",]}#".contains(*c)).take(60).collect();
        if !token.is_empty() {
            message = format!("{message} at `{}`", token.escape_debug());
        }
        if e.message().contains("too large") {
            message.push_str(&format!(" (TOML integers are 64-bit: {} to {})", i64::MIN, i64::MAX));
        }
        self.error(span, &key, message)
    }
}

/// The dotted key whose line holds byte `offset`, for syntax errors: the last `[header]` above
/// it and the key before `=` on its line.
pub(super) fn key_at(text: &str, offset: usize) -> String {
    let upto = text.get(..offset.min(text.len())).unwrap_or(text);
    let line_start = upto.rfind('\n').map_or(0, |i| i + 1);
    let header = upto[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split_once('=').map(|(k, _)| k.trim()).filter(|k| !k.is_empty() && !k.starts_with('['));
    match (header, key) {
        (Some(h), Some(k)) => format!("{h}.{k}"),
        (Some(h), None) => h,
        (None, Some(k)) => k.to_string(),
        (None, None) => "Cargo.toml".to_string(),
    }
}

/// The known key a misspelt one probably meant: `_` for `-`, case, or one or two typos.
pub(super) fn closest_key(name: &str, keys: &[&'static str]) -> Option<&'static str> {
    let norm = name.to_ascii_lowercase().replace('_', "-");
    keys.iter().map(|k| (edit_distance(&norm, k), *k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| k)
}

/// A key as TOML writes it: bare when it can be (`threads`), quoted otherwise (`"1N"`).
pub(super) fn quoted_key(name: &str) -> String {
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// `path:line:col` of a byte offset, or just `path`.
pub(super) fn location(path: &Path, text: &str, span: Option<Range<usize>>) -> Location {
    let at = span.map(|span| {
        let (line, col) = line_col(text, span.start);
        (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(col).unwrap_or(u32::MAX))
    });
    Location::File { path: path.to_path_buf(), at }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    // An offset inside a character counts as that character (never a slicing panic).
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
