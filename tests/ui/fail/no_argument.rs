// Macro syntax: the macro needs a shape.
manaka::manaka_net!();

fn main() {}
