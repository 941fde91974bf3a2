// ShapeError::Repeated for the feature space: `kp` and `halfkp` exclude each other.
manaka::manaka_net!("pair0_d128_o2_h256_kp_halfkp");

fn main() {}
