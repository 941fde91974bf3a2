// KP, HalfKP and NNUE shapes expand too; a raw string literal is a string literal.
use manaka::runtime::network::Network;

manaka::manaka_net!(r"pair0_d8_o2_h8_kp");
manaka::manaka_net!(Nnue = "pair0_d16_o1_h8_halfkp_nnue");

fn main() {
    assert_eq!(pair0_d8_o2_h8_kp::T, 1710);
    assert_eq!(Nnue::T, 125_388);
    assert_eq!(Nnue::INPUT, 32);
    // The engine types implement the runtime's network trait.
    fn is_network<N: Network>() {}
    is_network::<pair0_d8_o2_h8_kp::Engine>();
    is_network::<Nnue::Engine>();
}
