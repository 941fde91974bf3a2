// ShapeError::NnueForbids: the first forbidden token is named.
manaka::manaka_net!("pair0_d16_o1_h8_ks_kp_nnue");

fn main() {}
