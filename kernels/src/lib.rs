//! Const-size building blocks for generated engines. Filled in by issue 5.
