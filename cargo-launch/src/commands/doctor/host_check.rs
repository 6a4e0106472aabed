//! What a crate with `host` files needs beyond NVRTC and ptxas: nvcc in its toolchain and a host
//! C++ compiler, found as the build finds them (`launch_engine::tooling::host_compiler`, the
//! toolchain's `nvcc()`), so doctor and the build agree.

use launch_engine::tooling::toolchain::{damage, discover_for, Role};
use launch_engine::tooling::{host_compiler, Env};
use launch_schema::doctor::Problem;

/// The blocking problems of `config`'s `host` files (none without any): the build would fail
/// with exit 3 (or 2 for a toolchain line without nvcc) on each.
pub(crate) fn problems(env: &Env, config: &launch_engine::Config, problems: &mut Vec<Problem>) {
    let Some(first) = config.host.first() else { return };
    let at = format!("`host` files ({}: `{}`)", first.location, first.pattern);
    if let Err(why) = host_compiler(env) {
        problems.push(Problem {
            blocking: true,
            what: format!("{at} need a host C++ compiler (nvcc compiles their host code with it): {why}"),
            fix: "install g++ or clang++, or set CXX to one".into(),
        });
    }
    // A toolchain that is not found is the toolchain check's problem already.
    let Ok(t) = discover_for(env, &config.toolchain) else { return };
    // As the build judges it before running it.
    let memo = launch_engine::tooling::toolchain::cache_dir(env);
    if let Some(nvcc) = t.nvcc() {
        if let Some(why) = damage(&nvcc, Role::Program, memo.as_deref()) {
            let pin = config.toolchain.name;
            problems.push(Problem {
                blocking: true,
                what: format!("{at} are compiled with nvcc, and {} is damaged ({why})", nvcc.display()),
                fix: format!("run `cargo launch setup --toolchain {pin}`, which installs it again"),
            });
        }
    } else {
        let pin = config.toolchain.name;
        let fix = if t.major().is_some_and(|m| m < 13) {
            "set `toolchain = \"13.0\"` (its wheels include nvcc) and run `cargo launch setup --toolchain 13.0`, or \
             point LAUNCH_TOOLCHAIN at a CUDA toolkit with nvcc"
                .to_string()
        } else {
            format!("run `cargo launch setup --toolchain {pin}` again, or point LAUNCH_TOOLCHAIN at a CUDA toolkit with nvcc")
        };
        problems.push(Problem {
            blocking: true,
            what: format!(
                "{at} are compiled with nvcc, and the CUDA {pin} toolchain ({}) has none beside ptxas",
                t.root.display()
            ),
            fix,
        });
    }
}
