//! The generated reference pages (issue 22): one page per `cargo launch` subcommand from clap's
//! definitions, the configuration keys from launch-build's key table, the environment variables
//! from its `DOCUMENTED` table and grammar, the exit codes from cargo-launch's `EXIT_CODES`. Each
//! page is written by `LAUNCH_BLESS_DOCS=1` and otherwise compared with the committed one, so a
//! help text, a key or a variable cannot change without its page.
//!
//! Anchors, for other pages to link: `commands/<sub>.md#<long flag without dashes>` (a positional
//! argument: its value name in lower case; `cache`'s actions: `#<action>` and
//! `#<action>-<flag>`), `config.md#<key>` (a sub-table's key: `#file-<key>`, `#kernel-<key>`,
//! `#tune-<key>`), `environment.md#<variable in lower case>`, `exit-codes.md#exit-<code>`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command};
use launch_engine::config::{Key, FILE_KEYS, KERNEL_KEYS, KEYS, TUNE_KEYS};
use launch_engine::tooling::{accepted_values, var, Env, DOCUMENTED};

/// How to write the pages after a deliberate change.
const BLESS: &str = "LAUNCH_BLESS_DOCS=1 cargo test -p launch-tests --test docs";

/// The comment each page starts with.
fn generated(source: &str) -> String {
    format!(
        "<!-- Generated from {source} by tests/docs/reference.rs: do not edit. Regenerate with\n     {BLESS} -->\n\n"
    )
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is in the repository").to_path_buf()
}

/// Every generated page: its path from the repository root and its text.
fn pages() -> Vec<(String, String)> {
    let cli = cargo_launch::command();
    let mut pages = vec![("docs/src/reference/commands/index.md".to_string(), commands_index(&cli))];
    for sub in visible_subcommands(&cli) {
        pages.push((format!("docs/src/reference/commands/{}.md", sub.get_name()), command_page(sub)));
    }
    pages.push(("docs/src/reference/config.md".into(), config_page()));
    pages.push(("docs/src/reference/environment.md".into(), environment_page()));
    pages.push(("docs/src/reference/exit-codes.md".into(), exit_codes_page()));
    pages
}

/// `None` when `generated` is `committed`; else the first lines that differ, numbered, for a short
/// failure message.
fn compare(path: &str, committed: &str, generated: &str) -> Option<String> {
    if committed == generated {
        return None;
    }
    let (old, new): (Vec<&str>, Vec<&str>) = (committed.lines().collect(), generated.lines().collect());
    // The lines between the common beginning and the common end: what changed.
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..].iter().rev().zip(new[head..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (removed, added) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut out = format!("{path} differs from what the code generates, from line {}:\n", head + 1);
    for line in removed.iter().take(8) {
        let _ = writeln!(out, "  - {line}");
    }
    for line in added.iter().take(8) {
        let _ = writeln!(out, "  + {line}");
    }
    if removed.len() > 8 || added.len() > 8 {
        let _ = writeln!(out, "  … ({} lines removed, {} added in all)", removed.len(), added.len());
    }
    if removed.is_empty() && added.is_empty() {
        out.push_str("  (line endings or the final newline differ)\n");
    }
    Some(out)
}

/// The committed pages are the generated ones; `LAUNCH_BLESS_DOCS=1` writes them instead.
#[test]
fn the_reference_pages_are_the_generated_ones() {
    let bless = Env::cli().flag(var::LAUNCH_BLESS_DOCS).expect("LAUNCH_BLESS_DOCS is 1 or 0");
    let root = repository();
    let pages = pages();
    let mut stale = String::new();
    for (path, text) in &pages {
        let file = root.join(path);
        if bless {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            if std::fs::read_to_string(&file).ok().as_ref() != Some(text) {
                std::fs::write(&file, text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            }
            continue;
        }
        let committed = std::fs::read_to_string(&file).unwrap_or_default();
        stale.extend(compare(path, &committed, text));
    }
    // A page of a subcommand that is gone.
    for entry in std::fs::read_dir(root.join("docs/src/reference/commands")).into_iter().flatten().flatten() {
        let path = format!("docs/src/reference/commands/{}", entry.file_name().to_string_lossy());
        if !pages.iter().any(|(p, _)| *p == path) {
            if bless {
                std::fs::remove_file(entry.path()).unwrap();
            } else {
                let _ = writeln!(stale, "{path} is no subcommand's page");
            }
        }
    }
    assert!(stale.is_empty(), "{stale}\nthe reference pages are generated from the code; run:\n  {BLESS}");
}

/// The comparison fails when a help text changes: the page of `check` regenerated from a command
/// line whose `--no-setup` says something else differs, at that line.
#[test]
fn a_changed_help_text_fails_the_comparison() {
    let cli = cargo_launch::command();
    let check = cli.find_subcommand("check").expect("check");
    let page = command_page(check);
    assert_eq!(compare("check.md", &page, &page), None);
    let edited = check.clone().mut_arg("no_setup", |a| a.help("Something else entirely."));
    let changed = command_page(&edited);
    let diff = compare("check.md", &page, &changed).expect("a changed help text is a difference");
    assert!(diff.contains("+ Something else entirely."), "{diff}");
    assert!(diff.contains("check.md differs"), "{diff}");
    // A committed page with one word changed, or missing its last newline, differs too.
    assert!(compare("x.md", &page.replacen("baseline", "base line", 1), &page).is_some());
    assert!(compare("x.md", page.trim_end(), &page).is_some());
}

/// The pages hold what other pages link to and what a newcomer reads first.
#[test]
fn the_pages_have_their_anchors_and_an_introduction() {
    let pages = pages();
    let page = |p: &str| &pages.iter().find(|(path, _)| path.ends_with(p)).unwrap_or_else(|| panic!("{p}")).1;
    for (path, text) in &pages {
        assert!(text.starts_with("<!-- Generated from "), "{path}");
        let title = text.lines().find(|l| l.starts_with("# ")).unwrap_or_else(|| panic!("{path}: a title"));
        let after = text.split(title).nth(1).unwrap().trim_start();
        assert!(after.starts_with("This page"), "{path}: a sentence saying what the page is");
    }
    for anchor in ["deny", "bless", "format", "manifest-path", "package"] {
        assert!(page("commands/check.md").contains(&format!("<a id=\"{anchor}\"></a>")), "check.md#{anchor}");
    }
    assert!(page("commands/explore.md").contains("<a id=\"kernel\"></a>"));
    assert!(page("commands/cache.md").contains("<a id=\"prune-max-size\"></a>"));
    for anchor in ["arch", "ptxas-flags", "cache-remote", "file-arch", "kernel-dynamic-smem", "tune-max_regs"] {
        assert!(page("config.md").contains(&format!("<a id=\"{anchor}\"></a>")), "config.md#{anchor}");
    }
    for v in DOCUMENTED {
        for name in v.names() {
            let anchor = format!("<a id=\"{}\"></a>", name.to_ascii_lowercase());
            assert!(page("environment.md").contains(&anchor), "{anchor}");
        }
    }
    for (code, _, _) in cargo_launch::EXIT_CODES {
        assert!(page("exit-codes.md").contains(&format!("<a id=\"exit-{code}\"></a>")));
    }
    // Every subcommand is in the index, linked.
    for sub in visible_subcommands(&cargo_launch::command()) {
        let link = format!("]({}.md)", sub.get_name());
        assert!(page("commands/index.md").contains(&link), "{link}");
    }
}

/// Every configuration example of the key table is accepted by the parser.
#[test]
fn every_key_example_is_accepted_by_the_parser() {
    let dir = crate_dir();
    for (table, keys) in tables() {
        for key in keys {
            let toml = example_block(key);
            let text = format!("{PACKAGE}{toml}");
            launch_engine::Config::parse(&dir.path().join("Cargo.toml"), &text)
                .unwrap_or_else(|e| panic!("the example of {table} `{}` is refused: {e}\n{toml}", key.name));
        }
    }
}

/// Every `cargo launch …` example of a help text is a command line `cargo launch` takes.
#[test]
fn every_example_of_the_help_texts_parses() {
    let cli = cargo_launch::command();
    let mut examples = 0;
    for sub in visible_subcommands(&cli) {
        let text = sub.get_after_long_help().or(sub.get_after_help()).map(|t| t.to_string()).unwrap_or_default();
        for line in text.lines().filter_map(|l| l.trim().strip_prefix("cargo launch ")) {
            // A redirection is the shell's, not an argument.
            let line = line.split(" > ").next().unwrap_or(line);
            let mut args = vec!["launch".to_string()];
            args.extend(words(line));
            // A `--manifest-path` is read when the command line is (one that is no crate's is
            // refused): the example's names the reader's crate; the repository's stands for it.
            if let Some(at) = args.iter().position(|a| a == "--manifest-path") {
                args[at + 1] = repository().join("Cargo.toml").display().to_string();
            }
            cli.clone().try_get_matches_from(&args).unwrap_or_else(|e| panic!("`cargo launch {line}`: {e}"));
            examples += 1;
        }
    }
    assert!(examples >= 20, "{examples}");
    // What a stale example would be: refused.
    assert!(cli.clone().try_get_matches_from(["launch", "check", "--deny", "everything"]).is_err());
    assert_eq!(
        words(r#"coverage --gpu "RTX 4090,T4" --kernel '^a b'"#),
        ["coverage", "--gpu", "RTX 4090,T4", "--kernel", "^a b"]
    );
}

/// `line` split as a shell splits it, for the examples' quoting (`'...'`, `"..."`).
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => (quote, started) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

// ---- commands ----

fn visible_subcommands(cmd: &Command) -> Vec<&Command> {
    cmd.get_subcommands().filter(|c| !c.is_hide_set()).collect()
}

fn commands_index(cli: &Command) -> String {
    let mut s = generated("cargo-launch/src/cli.rs (clap's definitions)");
    s.push_str("# Commands\n\n");
    s.push_str(
        "This page lists every subcommand of `cargo launch`, each with the first line of its `--help`; each \
         command's page holds everything its `--help` says. Every command also takes `-h` (a summary) and \
         `--help` (everything), and `cargo launch --version` prints the version.\n\n",
    );
    if let Some(about) = cli.get_long_about().or(cli.get_about()) {
        let _ = writeln!(s, "{}\n", prose(&about.to_string()));
    }
    s.push_str("| command | what it does |\n|---|---|\n");
    for sub in visible_subcommands(cli) {
        let name = sub.get_name();
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(s, "| <a id=\"{name}\"></a>[`{name}`]({name}.md) | {} |", cell(&about));
    }
    s.push_str(
        "\nHow each command exits: [Exit codes](../exit-codes.md). The variables they read: \
         [Environment variables](../environment.md).\n",
    );
    s
}

fn command_page(cmd: &Command) -> String {
    let name = cmd.get_name();
    let mut s = generated("cargo-launch/src/cli.rs (clap's definitions)");
    let _ = writeln!(s, "# `cargo launch {name}`\n");
    let _ = writeln!(
        s,
        "This page is the reference of `cargo launch {name}`: what `cargo launch {name} --help` prints, \
         generated from the same definitions. [All commands](index.md).\n"
    );
    let about = cmd.get_long_about().or(cmd.get_about()).map(|a| a.to_string()).unwrap_or_default();
    let _ = writeln!(s, "{}\n", sentence(&prose(&about)));
    let _ = writeln!(s, "## Usage\n\n```text\n{}\n```\n", usage(cmd));
    write_arguments(&mut s, cmd, "", "##");
    let actions = visible_subcommands(cmd);
    if !actions.is_empty() {
        s.push_str("## Actions\n\n");
        for action in actions {
            let a = action.get_name();
            let _ = writeln!(s, "<a id=\"{a}\"></a>\n### `cargo launch {name} {a}`\n");
            let about = action.get_long_about().or(action.get_about()).map(|a| a.to_string()).unwrap_or_default();
            let _ = writeln!(s, "{}\n\n```text\n{}\n```\n", sentence(&prose(&about)), usage(action));
            write_arguments(&mut s, action, &format!("{a}-"), "####");
        }
    }
    if let Some(more) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        s.push_str("## Details\n\n");
        s.push_str(&after_help(&more.to_string()));
    }
    s.push_str(
        "How it exits: [Exit codes](../exit-codes.md). The variables it reads: [Environment \
         variables](../environment.md).\n",
    );
    s
}

/// `cargo launch check [OPTIONS]`, as clap writes it.
fn usage(cmd: &Command) -> String {
    let usage = cmd.clone().render_usage().to_string();
    usage.strip_prefix("Usage: ").unwrap_or(&usage).trim().to_string()
}

/// The positional arguments, then the options, each under a heading with its anchor.
fn write_arguments(s: &mut String, cmd: &Command, prefix: &str, level: &str) {
    // An action's copy of its command's global options is listed once, at the command.
    let shown = |a: &&Arg| {
        !a.is_hide_set()
            && !matches!(a.get_id().as_str(), "help" | "version")
            && (!a.is_global_set() || prefix.is_empty())
    };
    let positionals: Vec<&Arg> = cmd.get_positionals().filter(shown).collect();
    let options: Vec<&Arg> = cmd.get_arguments().filter(|a| !a.is_positional()).filter(shown).collect();
    for (title, args) in [("Arguments", positionals), ("Options", options)] {
        if args.is_empty() {
            continue;
        }
        let _ = writeln!(s, "{level} {title}\n");
        for arg in args {
            write_argument(s, arg, prefix, level);
        }
    }
}

fn write_argument(s: &mut String, arg: &Arg, prefix: &str, level: &str) {
    let values: Vec<String> = arg.get_value_names().unwrap_or_default().iter().map(|v| format!("<{v}>")).collect();
    let values = values.join(" ");
    let (anchor, heading) = match arg.get_long() {
        Some(long) => {
            let short = arg.get_short().map(|c| format!("-{c}, ")).unwrap_or_default();
            let takes =
                if arg.get_num_args().is_some_and(|n| n.takes_values()) { format!(" {values}") } else { String::new() };
            (long.to_string(), format!("{short}--{long}{takes}"))
        }
        None => (arg.get_value_names().unwrap_or_default()[0].to_ascii_lowercase(), values.clone()),
    };
    let _ = writeln!(s, "<a id=\"{prefix}{anchor}\"></a>\n{level}# `{heading}`\n");
    let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
    let _ = writeln!(s, "{}\n", sentence(&prose(&help)));
    let mut facts = Vec::new();
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| match p.get_help() {
            Some(h) => format!("`{}` ({})", p.get_name(), prose(h.to_string().trim_end_matches('.'))),
            None => format!("`{}`", p.get_name()),
        })
        .collect();
    if !possible.is_empty() {
        facts.push(format!("Possible values: {}.", possible.join("; ")));
    }
    let takes_values = arg.get_action().takes_values();
    let defaults: Vec<String> = arg.get_default_values().iter().map(|d| format!("`{}`", d.to_string_lossy())).collect();
    if takes_values && !defaults.is_empty() {
        facts.push(format!("Default: {}.", defaults.join(", ")));
    }
    if matches!(arg.get_action(), ArgAction::Append) {
        let delimiter = if arg.get_value_delimiter() == Some(',') { ", or comma-separated" } else { "" };
        facts.push(format!("Repeatable{delimiter}."));
    }
    if arg.is_required_set() {
        facts.push("Required.".into());
    }
    if arg.is_global_set() {
        facts.push("Also taken after an action.".into());
    }
    for fact in facts {
        let _ = writeln!(s, "- {fact}");
    }
    if !s.ends_with("\n\n") {
        s.push('\n');
    }
}

/// A command's text after the options: paragraphs as prose, and an `Example:` paragraph's
/// indented command lines as a shell block.
fn after_help(text: &str) -> String {
    let mut out = String::new();
    for paragraph in text.trim().split("\n\n") {
        let lines: Vec<&str> = paragraph.lines().collect();
        let commands: Vec<&str> =
            lines.iter().skip(1).filter_map(|l| l.strip_prefix("  ")).map(str::trim).collect::<Vec<_>>();
        if lines.len() > 1 && lines[0].ends_with(':') && commands.len() == lines.len() - 1 {
            let _ = writeln!(out, "{}\n\n```sh\n{}\n```\n", prose(lines[0]), commands.join("\n"));
        } else {
            let _ = writeln!(out, "{}\n", prose(paragraph));
        }
    }
    out
}

// ---- markdown helpers ----

/// Wrapped help text as one markdown paragraph (or several, at blank lines): lines joined, and
/// outside code spans `<`, `>` and `*` escaped, so `<cache>` or `**/x` print as written.
fn prose(text: &str) -> String {
    text.trim()
        .split("\n\n")
        .map(|p| escape(&p.lines().map(str::trim).collect::<Vec<_>>().join(" ")))
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn escape(text: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    for c in text.chars() {
        match c {
            '`' => {
                code = !code;
                out.push(c);
            }
            '<' if !code => out.push_str("&lt;"),
            '>' if !code => out.push_str("&gt;"),
            '*' if !code => out.push_str("\\*"),
            '_' if !code => out.push_str("\\_"),
            _ => out.push(c),
        }
    }
    out
}

/// `text` ending as a sentence: clap drops a help text's final period.
fn sentence(text: &str) -> String {
    match text.chars().last() {
        Some('.' | '!' | '?') | None => text.to_string(),
        Some(_) => format!("{text}."),
    }
}

/// Text for a table cell: prose, with `|` escaped.
fn cell(text: &str) -> String {
    prose(text).replace('|', "\\|")
}

// ---- configuration ----

/// A package the configuration examples are parsed in.
const PACKAGE: &str = "[package]\nname = \"example\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n";

fn tables() -> [(&'static str, &'static [Key]); 4] {
    [
        ("[package.metadata.launch]", KEYS),
        ("[package.metadata.launch.file.\"<pattern>\"]", FILE_KEYS),
        ("[package.metadata.launch.kernel.<name>]", KERNEL_KEYS),
        ("[package.metadata.launch.tune.<kernel>]", TUNE_KEYS),
    ]
}

/// The anchor prefix of each table's keys.
fn key_prefix(table: &str) -> &'static str {
    match table {
        t if t.contains(".file.") => "file-",
        t if t.contains(".kernel.") => "kernel-",
        t if t.contains(".tune.") => "tune-",
        _ => "",
    }
}

/// A key's example as a complete `[package.metadata.launch]` block: the crate's table with an
/// `arch` list, then the example (a sub-table's example holds its header).
fn example_block(key: &Key) -> String {
    if key.example.starts_with("arch =") {
        format!("[package.metadata.launch]\n{}\n", key.example)
    } else if key.example.starts_with('[') {
        format!("[package.metadata.launch]\narch = [\"sm_80\", \"sm_90\"]\n\n{}\n", key.example)
    } else {
        format!("[package.metadata.launch]\narch = [\"sm_80\", \"sm_90\"]\n{}\n", key.example)
    }
}

/// A temporary crate with the folders the examples name (`kernels/`, `include/`), so the parser's
/// checks of folders pass.
fn crate_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for folder in ["kernels", "include"] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
    }
    dir
}

/// Bad values, each fed through the parser for its real message.
const ERROR_EXAMPLES: &[(&str, &str)] = &[
    ("`arch` is a list", "arch = \"sm_90\""),
    ("An arch no toolchain knows", "arch = [\"sm_91\"]"),
    ("A misspelled key", "arch = [\"sm_90\"]\nptxas_flags = [\"-O3\"]"),
    ("A block size out of range", "arch = [\"sm_90\"]\nthreads = 2000"),
    ("A toolchain that is not pinned", "arch = [\"sm_90\"]\ntoolchain = \"11.8\""),
    ("A flag that `@launch` replaces", "arch = [\"sm_90\"]\nflags = [\"-maxrregcount=32\"]"),
    (
        "A tune grid of the wrong type",
        "arch = [\"sm_90\"]\n\n[package.metadata.launch.tune.poly_eval]\nmax_regs = \"all\"",
    ),
];

fn config_page() -> String {
    let mut s = generated("launch-engine/src/config/keys.rs (the table the parser checks keys against)");
    s.push_str("# Configuration: `[package.metadata.launch]`\n\n");
    s.push_str(
        "This page lists every key a crate can set in its Cargo.toml under `[package.metadata.launch]` and its \
         sub-tables, with its type, default and an example. It is generated from the table the parser checks \
         keys against, so an unknown key is an error that lists exactly these names. Only `arch` is required:\n\n\
         ```toml\n[package.metadata.launch]\narch = [\"sm_90\"]\n```\n\n\
         Patterns (`exclude`, `host`, `file.\"…\"`, `kernel.\"…\"`) are globs: `*` is any run of characters but \
         `/`, `?` one character but `/`, `**` any run including `/` (`**/` also matches no folder at all). File \
         patterns are relative to the kernel folder. Every error names the file, line and column and the key \
         path; [Errors](#errors) shows some.\n\n",
    );
    for (table, keys) in tables() {
        let _ = writeln!(s, "## `{table}`\n\n| key | type | default |\n|---|---|---|");
        let prefix = key_prefix(table);
        for key in keys {
            let _ =
                writeln!(s, "| [`{}`](#{prefix}{}) | {} | {} |", key.name, key.name, cell(key.kind), cell(key.default));
        }
        s.push('\n');
        for key in keys {
            let _ = writeln!(s, "<a id=\"{prefix}{}\"></a>\n### `{}`\n", key.name, key.name);
            let _ = writeln!(s, "{}\n", key.description);
            let _ = writeln!(s, "- Type: {}.\n- Default: {}.\n", escape(key.kind), key.default);
            let _ = writeln!(s, "```toml\n{}```\n", example_block(key));
        }
    }
    s.push_str(&config_errors());
    s
}

/// The error examples, each with the parser's message (the temporary folder left out).
fn config_errors() -> String {
    let mut s = String::from(
        "<a id=\"errors\"></a>\n## Errors\n\nA value the parser refuses stops the build (and `cargo launch`, exit \
         [2](exit-codes.md#exit-2)) with the place, the key path, the value and what is accepted. These are \
         real messages of the parser for the Cargo.toml above them (its `[package]` table, after the block, left \
         out):\n\n",
    );
    let dir = crate_dir();
    let manifest = dir.path().join("Cargo.toml");
    for (title, body) in ERROR_EXAMPLES {
        let toml = format!("[package.metadata.launch]\n{body}\n");
        // `[package]` after the block, so the lines of the message are the block's.
        let text = format!("{toml}\n{PACKAGE}");
        let e = launch_engine::Config::parse(&manifest, &text).expect_err(title);
        let message = e.to_string().replace(&format!("{}/", dir.path().display()), "");
        let _ = writeln!(s, "### {title}\n\n```toml,error\n{toml}```\n\n```text\n{message}\n```\n");
    }
    s
}

// ---- environment ----

fn environment_page() -> String {
    let mut s = generated("launch-engine/src/env.rs (`DOCUMENTED` and the grammar of each variable)");
    s.push_str("# Environment variables\n\n");
    s.push_str(
        "This page lists every environment variable cargo-launch reads: `cargo launch`, the build script \
         (`launch_build::build()`) and, where it says *at run time*, a program using `launch`. It is generated \
         from the one table every read goes through, which `cargo launch --help` prints too. A variable that \
         reruns the build script is announced to cargo (`cargo:rerun-if-env-changed`), so changing it rebuilds \
         the crate's kernels; the others change no build output. A value is checked before anything is built, \
         by `cargo launch` and the build script alike: a bad one is a configuration error (exit \
         [2](exit-codes.md#exit-2)) naming the variable, the value and what it accepts.\n\n\
         | variable | reruns the build script |\n|---|---|\n",
    );
    for v in DOCUMENTED {
        let links: Vec<String> = v.names().iter().map(|n| format!("[`{n}`](#{})", n.to_ascii_lowercase())).collect();
        let _ = writeln!(s, "| {} | {} |", links.join(", "), if v.reruns { "yes" } else { "no" });
    }
    s.push('\n');
    for v in DOCUMENTED {
        let anchors: String =
            v.names().iter().map(|n| format!("<a id=\"{}\"></a>\n", n.to_ascii_lowercase())).collect();
        let names: Vec<String> = v.names().iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(s, "{anchors}## {}\n", names.join(", "));
        let _ = writeln!(s, "- What it does: {}.", escape(v.effect));
        let accepted = accepted_values(v).expect("a documented variable");
        let _ = writeln!(s, "- Accepted values: {accepted}.");
        let _ = writeln!(s, "- Reruns the build script: {}.\n", if v.reruns { "yes" } else { "no" });
    }
    s
}

// ---- exit codes ----

fn exit_codes_page() -> String {
    let mut s = generated("cargo-launch/src/error.rs (`EXIT_CODES`)");
    s.push_str("# Exit codes\n\n");
    s.push_str(
        "This page lists the codes `cargo launch` exits with and what each means, for scripts and CI jobs that \
         act on them. It is generated from the one table the errors take their codes from, which `cargo launch \
         --help` prints too.\n\n| code | meaning |\n|---|---|\n",
    );
    for (code, name, _) in cargo_launch::EXIT_CODES {
        let _ = writeln!(s, "| [{code}](#exit-{code}) | {} |", cell(name));
    }
    s.push('\n');
    for (code, name, meaning) in cargo_launch::EXIT_CODES {
        let mut text = meaning.to_string();
        text[..1].make_ascii_uppercase();
        let _ = writeln!(s, "<a id=\"exit-{code}\"></a>\n## {code}: {name}\n\n{}.\n", escape(&text));
    }
    s
}
