// ShapeError::NnueNeedsPair0.
manaka::manaka_net!("pair4_d16_o1_h8_kp_nnue");

fn main() {}
