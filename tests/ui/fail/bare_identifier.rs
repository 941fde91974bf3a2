// Macro syntax: a shape written without quotes reads as the start of `Name = "..."`.
manaka::manaka_net!(pair16_d128_o3_h512);

fn main() {}
