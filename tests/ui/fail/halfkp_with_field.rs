// ShapeError::HalfKpWithField: the field table would not fit.
manaka::manaka_net!("pair0_d16_o1_h8_f2_halfkp");

fn main() {}
