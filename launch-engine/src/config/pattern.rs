//! The glob patterns of `exclude`, `host`, `file."<pattern>"` and `kernel."<key>"`. The build
//! plan (`plan`) is the one place they are matched against files and kernels.

/// Whether the key of a `[package.metadata.launch.kernel."<key>"]` table applies to kernel `name`
/// (qualified name `qualified`): equal to either, or a pattern matching the plain name (the
/// qualified one when the pattern holds `::`).
pub fn kernel_key_matches(key: &str, name: &str, qualified: &str) -> bool {
    if key == name || key == qualified {
        return true;
    }
    is_pattern(key) && glob_match(key, if key.contains("::") { qualified } else { name })
}

/// Whether a key holds glob characters.
pub fn is_pattern(s: &str) -> bool {
    s.contains(['*', '?'])
}

/// Whether `pattern` matches the path `rel` (`/`-separated) or one of its folders: a folder
/// matched means everything under it is.
pub fn path_matches(pattern: &str, rel: &str) -> bool {
    let pattern = pattern.trim_end_matches('/');
    // One pass for the path and all its folders (one match per folder was quadratic in the path).
    let (ends, t) = glob_ends(pattern, rel);
    ends.iter().enumerate().any(|(i, &end)| end && t.get(i).is_none_or(|&c| c == '/'))
}

/// One element of a glob pattern.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Glob {
    Char(char),
    /// `?`: one character but `/`.
    One,
    /// `*`: any run of characters but `/`.
    Star,
    /// `**`: any run of characters.
    Any,
    /// `**/`: nothing, or any run of characters ending in `/`.
    Folders,
}

/// Whether `text` matches the glob `pattern` as a whole. Time is pattern length × text length,
/// whatever the pattern (no backtracking).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    // The literal part before the first wildcard must begin the text: most kernel names fail
    // here, before the match is built (a crate's tables × hundreds of kernels, unoptimised).
    let literal = &pattern[..pattern.find(['*', '?']).unwrap_or(pattern.len())];
    if !text.starts_with(literal) {
        return false;
    }
    let (ends, t) = glob_ends(pattern, text);
    ends[t.len()]
}

/// For each `i`, whether `pattern` matches the first `i` characters of `text` as a whole; and
/// `text`'s characters.
fn glob_ends(pattern: &str, text: &str) -> (Vec<bool>, Vec<char>) {
    let mut tokens = Vec::new();
    let p: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < p.len() {
        let (t, len) = match (p[i], p.get(i + 1), p.get(i + 2)) {
            ('*', Some('*'), Some('/')) => (Glob::Folders, 3),
            ('*', Some('*'), _) => (Glob::Any, 2),
            ('*', _, _) => (Glob::Star, 1),
            ('?', _, _) => (Glob::One, 1),
            (c, _, _) => (Glob::Char(c), 1),
        };
        tokens.push(t);
        i += len;
    }
    let t: Vec<char> = text.chars().collect();
    // at[i]: the tokens so far can match exactly t[..i].
    let mut at = vec![false; t.len() + 1];
    at[0] = true;
    for tok in tokens {
        let mut next = vec![false; t.len() + 1];
        let mut reach = false;
        for i in 0..=t.len() {
            match tok {
                Glob::Char(c) => next[i] = i > 0 && at[i - 1] && t[i - 1] == c,
                Glob::One => next[i] = i > 0 && at[i - 1] && t[i - 1] != '/',
                Glob::Star => {
                    reach |= at[i];
                    next[i] = reach;
                    if t.get(i) == Some(&'/') {
                        reach = false;
                    }
                }
                Glob::Any => {
                    reach |= at[i];
                    next[i] = reach;
                }
                Glob::Folders => {
                    next[i] = at[i] || (reach && i > 0 && t[i - 1] == '/');
                    reach |= at[i];
                }
            }
        }
        at = next;
    }
    (at, t)
}
