// An invalid shape in the `Name = "..."` form is spanned on the literal too.
manaka::manaka_net!(Tiny = "pair4_d16_o2_h32_lse5");

fn main() {}
