// Macro syntax: nothing may follow the shape string.
manaka::manaka_net!("pair4_d16_o2_h32", extra);

fn main() {}
