// Macro syntax: the shape must be a string literal, not a number.
manaka::manaka_net!(16);

fn main() {}
