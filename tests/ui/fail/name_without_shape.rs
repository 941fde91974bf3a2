// Macro syntax: `Name =` must be followed by the shape string.
manaka::manaka_net!(Tiny =);

fn main() {}
