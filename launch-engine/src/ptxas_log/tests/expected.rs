//! What each recorded log must parse to: its entries' numbers, in printed order.

use super::Row;

pub(super) const BELOW_SM90_CMEM: &[(u32, u64)] = &[(3, 1024), (4, 8)];

/// `nvrtc-12.9/frontend_warn.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const NVRTC12_9_FRONTEND_WARN_SM_90: &[Row] = &[("k_warn", [8, 0, 0, 0, 0, 0, 0], None, Some(1.320))];
/// `nvrtc-12.9/multi.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const NVRTC12_9_MULTI_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(1.977)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.103)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.847)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.490)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.946)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.859)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.791)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.705)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, Some(2.285)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.179)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.338)),
];
/// `nvrtc-12.9/spill.sm_52.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const NVRTC12_9_SPILL_SM_52: &[Row] = &[
    ("heavy_free", [128, 0, 0, 0, 0, 0, 0], Some(340), Some(24.483)),
    ("heavy_mr", [40, 0, 488, 1068, 1096, 488, 0], Some(340), Some(29.518)),
    ("heavy_lb", [32, 0, 544, 1216, 1248, 544, 0], Some(340), Some(30.232)),
];
/// `ptxas-12.4/multi_v84.sm_80.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_4_MULTI_V84_SM_80: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], Some(352), None),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), None),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [16, 0, 0, 0, 0, 0, 2048], Some(368), None),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 0, 0, 0, 0, 0, 512], Some(368), None),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), None),
    ("k_barreg", [10, 0, 0, 0, 0, 0, 0], Some(364), None),
    ("k_bar15", [10, 0, 0, 0, 0, 0, 0], Some(360), None),
    ("k_bar5", [10, 0, 0, 0, 0, 0, 0], Some(360), None),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], Some(364), None),
    ("k_smem", [12, 0, 0, 0, 0, 0, 4096], Some(368), None),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), None),
];
/// `ptxas-12.6/multi_v84.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_6_MULTI_V84_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, None),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, None),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, None),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, None),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, None),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, None),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, None),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, None),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, None),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, None),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, None),
];
/// `ptxas-12.8/multi_v84.sm_120.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_8_MULTI_V84_SM_120: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(6.409)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.340)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.854)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.224)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.887)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.715)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.682)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.745)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], None, Some(2.215)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.080)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.304)),
];
/// `ptxas-12.9/bigsmem.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_BIGSMEM_SM_90: &[Row] = &[
    ("small_smem", [10, 1, 0, 0, 0, 0, 1024], None, Some(2.579)),
    ("big_smem", [10, 1, 0, 0, 0, 0, 65536], None, Some(1.084)),
];
/// `ptxas-12.9/directives.sm_80.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_DIRECTIVES_SM_80: &[Row] = &[
    ("k_outofrange", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(1.772)),
    ("k_toomany", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(0.763)),
    ("k_lowreg", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(0.664)),
    ("k_minnct", [8, 0, 0, 0, 0, 0, 0], Some(360), Some(0.461)),
];
/// `ptxas-12.9/multi.sm_100.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_SM_100: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(1.770)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(0.945)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.854)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.164)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.911)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.709)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.707)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.646)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, Some(2.116)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.048)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.298)),
];
/// `ptxas-12.9/multi.sm_120.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_SM_120: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(2.049)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(0.956)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.848)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.181)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(1.033)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.838)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.725)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.792)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], None, Some(2.375)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.162)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.451)),
];
/// `ptxas-12.9/multi.sm_52.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_SM_52: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(320), Some(3.731)),
    ("k_const", [4, 0, 0, 0, 0, 0, 0], Some(332), Some(0.824)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], Some(336), Some(2.086)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [10, 1, 0, 0, 0, 0, 512], Some(336), Some(1.505)),
    ("_Z5scalePffi", [4, 0, 0, 0, 0, 0, 0], Some(336), Some(0.596)),
    ("k_barreg", [7, 16, 0, 0, 0, 0, 0], Some(332), Some(0.615)),
    ("k_bar15", [6, 16, 0, 0, 0, 0, 0], Some(328), Some(0.510)),
    ("k_bar5", [6, 6, 0, 0, 0, 0, 0], Some(328), Some(0.486)),
    ("k_call", [32, 0, 128, 0, 0, 128, 0], Some(332), Some(3.327)),
    ("k_smem", [9, 1, 0, 0, 0, 0, 4096], Some(336), Some(0.815)),
    ("k_empty", [2, 0, 0, 0, 0, 0, 0], Some(320), Some(0.239)),
];
/// `ptxas-12.9/multi.sm_75.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_SM_75: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(352), Some(1.616)),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), Some(0.853)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [18, 1, 0, 0, 0, 0, 2048], Some(368), Some(2.412)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 512], Some(368), Some(1.646)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), Some(0.593)),
    ("k_barreg", [10, 16, 0, 0, 0, 0, 0], Some(364), Some(0.578)),
    ("k_bar15", [10, 16, 0, 0, 0, 0, 0], Some(360), Some(0.500)),
    ("k_bar5", [10, 6, 0, 0, 0, 0, 0], Some(360), Some(0.632)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], Some(364), Some(1.650)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], Some(368), Some(0.688)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), Some(0.265)),
];
/// `ptxas-12.9/multi.sm_80.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_SM_80: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], Some(352), Some(1.415)),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), Some(0.804)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [16, 1, 0, 0, 0, 0, 2048], Some(368), Some(2.259)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], Some(368), Some(1.890)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), Some(0.661)),
    ("k_barreg", [10, 16, 0, 0, 0, 0, 0], Some(364), Some(0.645)),
    ("k_bar15", [10, 16, 0, 0, 0, 0, 0], Some(360), Some(0.554)),
    ("k_bar5", [10, 6, 0, 0, 0, 0, 0], Some(360), Some(0.538)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], Some(364), Some(1.971)),
    ("k_smem", [12, 1, 0, 0, 0, 0, 4096], Some(368), Some(0.822)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), Some(0.295)),
];
/// `ptxas-12.9/multi.sm_90.g.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_SM_90_G: &[Row] = &[
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(1.421)),
    ("k_smem", [17, 1, 0, 0, 0, 0, 4096], None, Some(1.597)),
    ("k_call", [24, 0, 0, 0, 0, 136, 0], None, Some(1.084)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.716)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.695)),
    ("k_barreg", [13, 16, 0, 0, 0, 0, 0], None, Some(0.802)),
    ("_Z5scalePffi", [12, 0, 0, 0, 0, 0, 0], None, Some(0.748)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [15, 1, 0, 0, 0, 0, 512], None, Some(2.243)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [16, 1, 0, 0, 0, 0, 2048], None, Some(2.244)),
    ("k_const", [13, 0, 0, 0, 0, 0, 0], None, Some(0.763)),
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(0.479)),
];
/// `ptxas-12.9/multi.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(2.680)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.006)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(2.838)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.275)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.883)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.697)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.672)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.745)),
    ("k_call", [38, 0, 128, 0, 0, 128, 0], None, Some(2.021)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.048)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.301)),
];
/// `ptxas-12.9/multi_rdc.c.sm_52.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_RDC_C_SM_52: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(320), Some(1.255)),
    ("k_const", [5, 0, 0, 0, 0, 0, 0], Some(332), Some(0.784)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 0], Some(336), Some(2.126)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [10, 1, 0, 0, 0, 0, 0], Some(336), Some(1.618)),
    ("_Z5scalePffi", [4, 0, 0, 0, 0, 0, 0], Some(336), Some(0.664)),
    ("k_barreg", [7, 16, 0, 0, 0, 0, 0], Some(332), Some(0.606)),
    ("k_bar15", [6, 16, 0, 0, 0, 0, 0], Some(328), Some(0.669)),
    ("k_bar5", [6, 6, 0, 0, 0, 0, 0], Some(328), Some(0.575)),
    ("k_call", [6, 0, 0, 0, 0, 0, 0], Some(332), Some(0.674)),
    ("k_smem", [9, 1, 0, 0, 0, 0, 4096], Some(336), Some(0.876)),
    ("k_empty", [2, 0, 0, 0, 0, 0, 0], Some(320), Some(0.401)),
];
/// `ptxas-12.9/multi_rdc.c.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_MULTI_RDC_C_SM_90: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(2.498)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.382)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 0], None, Some(4.473)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [10, 1, 0, 0, 0, 0, 0], None, Some(3.763)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(1.424)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(1.001)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.899)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.966)),
    ("k_call", [24, 0, 0, 0, 0, 0, 0], None, Some(1.333)),
    ("k_smem", [12, 1, 0, 0, 0, 0, 4096], None, Some(1.483)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.395)),
];
/// `ptxas-12.9/spill.sm_90.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_SPILL_SM_90: &[Row] = &[
    ("heavy_free", [128, 0, 0, 0, 0, 0, 0], None, Some(24.761)),
    ("heavy_mr", [40, 0, 368, 728, 756, 368, 0], None, Some(29.075)),
    ("heavy_lb", [32, 0, 408, 864, 876, 408, 0], None, Some(32.265)),
];
/// `ptxas-12.9/spill.sm_90.warn.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_SPILL_SM_90_WARN: &[Row] = &[
    ("heavy_free", [48, 0, 336, 652, 680, 336, 0], None, Some(47.912)),
    ("heavy_mr", [40, 0, 368, 728, 756, 368, 0], None, Some(31.463)),
    ("heavy_lb", [32, 0, 408, 864, 876, 408, 0], None, Some(30.007)),
];
/// `ptxas-12.9/spill.sm_90.werror.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P12_9_SPILL_SM_90_WERROR: &[Row] = &[
    ("heavy_free", [128, 0, 0, 0, 0, 0, 0], None, Some(28.031)),
    ("heavy_mr", [40, 0, 368, 728, 756, 368, 0], None, Some(31.312)),
    ("heavy_lb", [32, 0, 408, 864, 876, 408, 0], None, Some(32.054)),
];
/// `ptxas-13.0/multi.sm_110.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P13_0_MULTI_SM_110: &[Row] = &[
    ("k_count", [8, 0, 0, 0, 0, 0, 0], None, Some(1.913)),
    ("k_const", [10, 0, 0, 0, 0, 0, 0], None, Some(1.115)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 2048], None, Some(3.155)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [12, 1, 0, 0, 0, 0, 512], None, Some(2.277)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], None, Some(0.885)),
    ("k_barreg", [12, 16, 0, 0, 0, 0, 0], None, Some(0.751)),
    ("k_bar15", [12, 16, 0, 0, 0, 0, 0], None, Some(0.660)),
    ("k_bar5", [12, 6, 0, 0, 0, 0, 0], None, Some(0.674)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], None, Some(2.189)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], None, Some(1.242)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], None, Some(0.434)),
];
/// `ptxas-13.0/multi.sm_75.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P13_0_MULTI_SM_75: &[Row] = &[
    ("k_count", [5, 0, 0, 0, 0, 0, 0], Some(352), Some(5.226)),
    ("k_const", [8, 0, 0, 0, 0, 0, 0], Some(364), Some(0.933)),
    ("_Z4tsumIdLi256EEvPT_PKS0_", [18, 1, 0, 0, 0, 0, 2048], Some(368), Some(2.148)),
    ("_Z4tsumIfLi128EEvPT_PKS0_", [14, 1, 0, 0, 0, 0, 512], Some(368), Some(1.686)),
    ("_Z5scalePffi", [8, 0, 0, 0, 0, 0, 0], Some(368), Some(0.599)),
    ("k_barreg", [10, 16, 0, 0, 0, 0, 0], Some(364), Some(0.547)),
    ("k_bar15", [10, 16, 0, 0, 0, 0, 0], Some(360), Some(0.498)),
    ("k_bar5", [10, 6, 0, 0, 0, 0, 0], Some(360), Some(0.620)),
    ("k_call", [40, 0, 128, 0, 0, 128, 0], Some(364), Some(1.822)),
    ("k_smem", [14, 1, 0, 0, 0, 0, 4096], Some(368), Some(0.719)),
    ("k_empty", [4, 0, 0, 0, 0, 0, 0], Some(352), Some(0.248)),
];
/// `ptxas-13.0/spill.sm_120.warn.log`: (name, [registers, barriers, stack frame, spill stores, spill loads,
/// cumulative stack, smem], cmem[0], compile time), in printed order.
pub(super) const P13_0_SPILL_SM_120_WARN: &[Row] = &[
    ("heavy_free", [126, 0, 0, 0, 0, 0, 0], None, Some(24.017)),
    ("heavy_mr", [40, 0, 368, 788, 816, 368, 0], None, Some(29.911)),
    ("heavy_lb", [64, 0, 272, 524, 532, 272, 0], None, Some(29.789)),
];
