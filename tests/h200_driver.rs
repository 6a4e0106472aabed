// Filled in by the H200 driver comparison.
