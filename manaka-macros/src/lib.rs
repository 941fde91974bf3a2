//! `manaka_net!`: a network shape string becomes a fixed-size engine at compile time.
//! Filled in by issue 5.
