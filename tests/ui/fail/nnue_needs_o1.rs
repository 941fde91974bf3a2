// ShapeError::NnueNeedsO1: NNUE accumulators are plain sums.
manaka::manaka_net!("pair0_d16_o2_h8_kp_nnue");

fn main() {}
