// ShapeError::HalfKpWithPair: 125,388 tokens make too many pairs.
manaka::manaka_net!("pair4_d16_o1_h8_halfkp");

fn main() {}
