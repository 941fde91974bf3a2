// ShapeError::NnueNeedsKpFeatures: NNUE reads kp or halfkp features.
manaka::manaka_net!("pair0_d16_o1_h8_nnue");

fn main() {}
