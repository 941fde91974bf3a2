// Two engines of one shape under different names live side by side, and the macro works
// inside a function body and a nested module.
mod engines {
    manaka::manaka_net!(First = "pair1_d4_o1_h4");
    manaka::manaka_net!(Second = "pair1_d4_o1_h4");
}

fn main() {
    manaka::manaka_net!(Local = "pair0_d4_o1_h2_h22");
    assert_eq!(engines::First::SHAPE, engines::Second::SHAPE);
    assert_eq!(Local::H2, 2);
    let _: Option<engines::First::Engine> = None;
}
