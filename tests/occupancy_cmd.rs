// Filled in by the `cargo launch occupancy` work.
