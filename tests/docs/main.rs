//! The book's tests (issue 22): generated pages compared with the committed ones
//! (`LAUNCH_BLESS_DOCS=1` writes them). Run: `cargo test -p launch-tests --test docs`.

mod reference;
