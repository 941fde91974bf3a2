// Macro syntax: a shape written without quotes gets told to add them, pointing at the identifier.
manaka::manaka_net!(pair16_d128_o3_h512);

fn main() {}
