#!/usr/bin/env python3
"""The change candle-core would take upstream to load cubins (way (b) of the candle recipe).

    tools/candle/core_cubins.py CANDLE_CORE_DIR

Edits a copy of the published candle-core package in place: `get_or_load_func` loads the
module's cubin for the device's compute capability (`Module::cubins()`, which
`adapt.py --cubins` adds to candle-kernels) through cudarc's binary-image path, and falls back
to the PTX (JIT-compiled by the driver, as today) where no cubin was built for the device.
"""
import pathlib
import sys

LOAD = "        let cuda_module = self.context.load_module(mdl.ptx().into()).w()?;\n"
NEW_LOAD = """\
        // The cubin built for this device when there is one; otherwise the PTX, JIT-compiled.
        let image = match self.cubin_for(mdl) {
            Some(cubin) => cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()),
            None => mdl.ptx().into(),
        };
        let cuda_module = self.context.load_module(image).w()?;
"""
ANCHOR = "    pub fn get_or_load_func(&self, fn_name: &str, mdl: &kernels::Module) -> Result<CudaFunc> {\n"
HELPER = """\
    /// `mdl`'s cubin for this device's compute capability (`sm_90` on an H100 or H200), if built.
    fn cubin_for(&self, mdl: &kernels::Module) -> Option<&'static [u8]> {
        let (major, minor) = self.context.compute_capability().ok()?;
        let arch = format!("sm_{major}{minor}");
        mdl.cubins().iter().find(|(a, _)| *a == arch).map(|(_, cubin)| *cubin)
    }

"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    device = pathlib.Path(sys.argv[1]) / "src" / "cuda_backend" / "device.rs"
    text = device.read_text()
    for needle in (LOAD, ANCHOR):
        if text.count(needle) != 1:
            sys.exit(f"core_cubins.py: {device} is not the device.rs this recipe knows (no single `{needle.strip()}`)")
    text = text.replace(LOAD, NEW_LOAD).replace(ANCHOR, HELPER + ANCHOR)
    device.write_text(text)
    print(device)


if __name__ == "__main__":
    main()
