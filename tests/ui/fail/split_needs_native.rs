// ShapeError::SplitNeedsNative: own/opponent sums are defined for native tokens.
manaka::manaka_net!("pair0_d128_o3_h512_split_kp");

fn main() {}
