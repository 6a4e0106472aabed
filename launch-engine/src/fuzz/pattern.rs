//! The glob matcher of `exclude`, `host`, `file."<pattern>"` and `kernel."<key>"`
//! (`crate::config::{glob_match, path_matches}`): it agrees with the glob rules written out
//! as a memoised recursion (the reference below) on random patterns and paths, and takes time
//! linear in the path's length for a given pattern, however many folders the path has.

use std::collections::HashMap;

use fuzz_harness::{ensure, run, Input, Rng};

use super::PACKAGE;
use crate::config::{glob_match, path_matches};

/// Whether `p` matches `t` as a whole, by the rules as the book states them (`exclude` in `docs/src/guide/porting.md`): `?` one
/// character but `/`, `*` any run without `/`, `**` any run, `**/` nothing or a run ending in `/`.
fn reference(p: &[char], t: &[char], memo: &mut HashMap<(usize, usize), bool>) -> bool {
    let key = (p.len(), t.len());
    if let Some(&known) = memo.get(&key) {
        return known;
    }
    let r = match p {
        [] => t.is_empty(),
        ['*', '*', '/', rest @ ..] => {
            (0..=t.len()).any(|k| (k == 0 || t[k - 1] == '/') && reference(rest, &t[k..], memo))
        }
        ['*', '*', rest @ ..] => (0..=t.len()).any(|k| reference(rest, &t[k..], memo)),
        ['*', rest @ ..] => {
            (0..=t.len()).take_while(|&k| k == 0 || t[k - 1] != '/').any(|k| reference(rest, &t[k..], memo))
        }
        ['?', rest @ ..] => t.first().is_some_and(|&c| c != '/') && reference(rest, &t[1..], memo),
        [c, rest @ ..] => t.first() == Some(c) && reference(rest, &t[1..], memo),
    };
    memo.insert(key, r);
    r
}

/// `path_matches` by the reference: the pattern (without trailing `/`) matches the path or one of
/// its folders.
fn reference_path(pattern: &str, rel: &str) -> bool {
    let p: Vec<char> = pattern.trim_end_matches('/').chars().collect();
    let t: Vec<char> = rel.chars().collect();
    let ends = (0..=t.len()).filter(|&i| i == t.len() || t[i] == '/');
    ends.into_iter().any(|i| reference(&p, &t[..i], &mut HashMap::new()))
}

fn pieces(rng: &mut Rng, from: &[&str], max: usize) -> String {
    (0..rng.below(max + 1)).map(|_| rng.pick(from)).collect()
}

#[derive(Debug)]
struct Case {
    pattern: String,
    path: String,
    /// Too big for the reference: only time (the harness's per-input limit) and no panic.
    big: bool,
}

#[test]
fn glob_pattern() {
    const PATTERN: &[&str] = &["a", "b", "/", "*", "**", "**/", "?", ".cu", "é", "*/", "/**", "\\", "[", "."];
    const PATH: &[&str] = &["a", "b", "/", ".cu", "é", "*", "?", "ab/", ".", "\\", " "];
    run(
        PACKAGE,
        "glob_pattern",
        |rng| {
            let big = rng.one_in(16);
            let (pattern, path) = if big {
                // A path with thousands of folders: matching each folder apart was quadratic.
                (pieces(rng, PATTERN, 64), pieces(rng, &["a/", "b/", "/", "ab", "é/", "x.cu"], 8000))
            } else {
                (pieces(rng, PATTERN, 8), pieces(rng, PATH, 10))
            };
            Input::new(format!("{pattern}\n{path}"), Case { pattern, path, big })
        },
        |input| {
            let Case { pattern, path, big } = &input.expect;
            let (glob, whole) = (glob_match(pattern, path), path_matches(pattern, path));
            if *big {
                return Ok(());
            }
            let p: Vec<char> = pattern.chars().collect();
            let t: Vec<char> = path.chars().collect();
            let expected = reference(&p, &t, &mut HashMap::new());
            ensure(glob == expected, || format!("glob_match gave {glob}, the rules {expected}"))?;
            let expected = reference_path(pattern, path);
            ensure(whole == expected, || format!("path_matches gave {whole}, the rules {expected}"))?;
            // A path always matches itself when it has no glob characters; a pattern of `**` anything.
            if !path.contains(['*', '?']) && !path.is_empty() {
                ensure(path_matches(path, path), || "a plain path does not match itself".into())?;
            }
            ensure(path_matches("**", path), || "`**` does not match".into())
        },
    );
}
