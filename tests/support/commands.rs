//! The command lines of `cargo launch` as clap defines them (`cargo_launch::command()`), for the
//! tests that enumerate every command: a new command, format or required argument is covered
//! without editing a list (a required argument without a sample fails, naming it).

use std::path::PathBuf;

/// Sample values for the arguments commands require, by clap's argument id.
pub struct Samples {
    /// `explore`'s kernel.
    pub kernel: String,
    /// `new`'s folder.
    pub new_crate: String,
    /// `diff`'s two report documents.
    pub files: [PathBuf; 2],
}

impl Samples {
    fn values(&self, id: &str) -> Vec<String> {
        match id {
            "arch" => vec!["sm_90".into()],
            "kernel" => vec![self.kernel.clone()],
            "path_or_name" => vec![self.new_crate.clone()],
            "files" => self.files.iter().map(|f| f.display().to_string()).collect(),
            other => panic!("a command requires `{other}`: give tests/support/commands.rs a sample value for it"),
        }
    }
}

/// A command that runs (no further subcommand needed): its path (`["cache", "prune"]`) and clap's
/// definition.
pub struct Runnable {
    pub path: Vec<String>,
    pub command: clap::Command,
}

impl Runnable {
    /// The values its `--format` takes (none when it has no `--format`).
    pub fn formats(&self) -> Vec<String> {
        self.command
            .get_arguments()
            .find(|a| a.get_id() == "format")
            .map_or_else(Vec::new, |f| f.get_possible_values().iter().map(|v| v.get_name().to_string()).collect())
    }

    /// Whether it takes `--<long>`.
    pub fn takes(&self, long: &str) -> bool {
        self.command.get_arguments().any(|a| a.get_long() == Some(long))
    }

    /// Its path and the arguments it cannot run without: its required arguments, and the first
    /// member of each required group none of whose members is required already.
    pub fn line(&self, samples: &Samples) -> Vec<String> {
        let cmd = &self.command;
        let mut ids: Vec<String> =
            cmd.get_arguments().filter(|a| a.is_required_set()).map(|a| a.get_id().to_string()).collect();
        for group in cmd.get_groups().filter(|g| g.is_required_set()) {
            let members: Vec<String> = group.get_args().map(ToString::to_string).collect();
            if !members.iter().any(|m| ids.contains(m)) {
                ids.push(members.first().expect("a group has members").clone());
            }
        }
        let mut line = self.path.clone();
        for id in ids {
            let arg = cmd.get_arguments().find(|a| a.get_id() == id.as_str()).expect("the group's argument");
            if !arg.is_positional() {
                line.push(format!("--{}", arg.get_long().expect("an option has a long name")));
            }
            line.extend(samples.values(&id));
        }
        line
    }
}

/// Every command of `cargo launch`, nested ones too, each with its path; `all` also lists those
/// that need a further subcommand, each with its path.
pub fn all() -> (Vec<Runnable>, Vec<Vec<String>>) {
    let mut runnable = Vec::new();
    let mut paths = Vec::new();
    walk(&cargo_launch::command(), &mut Vec::new(), &mut runnable, &mut paths);
    (runnable, paths)
}

fn walk(cmd: &clap::Command, path: &mut Vec<String>, runnable: &mut Vec<Runnable>, paths: &mut Vec<Vec<String>>) {
    for sub in cmd.get_subcommands() {
        path.push(sub.get_name().to_string());
        paths.push(path.clone());
        walk(sub, path, runnable, paths);
        if !sub.is_subcommand_required_set() {
            runnable.push(Runnable { path: path.clone(), command: sub.clone() });
        }
        path.pop();
    }
}

/// Whether clap takes `line` (after `cargo launch`): a case clap refuses would test clap's usage
/// error, not the command.
pub fn assert_parses(line: &[String]) {
    let argv = std::iter::once("launch").chain(line.iter().map(String::as_str));
    if let Err(e) = cargo_launch::command().try_get_matches_from(argv) {
        panic!("the test's command line `{}` does not parse:\n{e}", line.join(" "));
    }
}
