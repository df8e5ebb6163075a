//! AC/DC's rules one at a time, on packets handed to the shim directly (the end-to-end checks are in
//! `crates/sim/tests/acdc.rs`).

use super::*;
use crate::host::vswitch::Shim;

const MSS: u64 = 1460;

fn cfg(extra: &str) -> Params {
    let c: Cfg = toml::from_str(extra).unwrap();
    c.resolve(1500).unwrap()
}

fn acdc(extra: &str) -> AcDc {
    AcDc::new(cfg(extra))
}

fn pkt(flags: u16, seq: u64, ack: u64, payload: u32) -> Packet {
    Packet {
        flow: 7,
        seq,
        ack,
        size: if payload == 0 { ACK_BYTES } else { payload + HEADER_BYTES },
        payload,
        win: u16::MAX,
        flags,
        ..Packet::blank()
    }
}

fn data(seq: u64) -> Packet {
    pkt(flags::DATA, seq, 0, MSS as u32)
}

fn ack(a: u64, total: u32, ce: u32) -> Packet {
    let mut p = pkt(flags::ACK, 0, a, 0);
    p.opt = TcpOpt::AcdcFeedback { total, ce };
    p
}

/// The sender's vSwitch after the handshake (window scale `ws`) with `n` segments sent.
fn sending(extra: &str, ws: u8, n: u64) -> AcDc {
    let mut a = acdc(extra);
    let mut out = ShimOut::default();
    a.egress(0, 0, &mut pkt(flags::SYN, 0, 0, 0), &mut out);
    let mut sa = pkt(flags::SYN | flags::ACK, 0, 0, 0);
    sa.opt = TcpOpt::WScale(ws);
    a.ingress(1, 0, &mut sa, &mut out);
    for i in 0..n {
        a.egress(2, 0, &mut data(i * MSS), &mut out);
    }
    a
}

fn snd(a: &AcDc) -> &Sender {
    &a.snd[&7]
}

#[test]
fn defaults_and_errors() {
    let p = cfg("");
    assert_eq!((p.rwnd_min, p.mss, p.iw, p.g, p.alpha_init, p.beta, p.police), (1460, 1460, 14600.0, 1.0 / 16.0, 1.0, 1.0, None));
    assert_eq!(p.idle, crate::units::SEC);
    assert_eq!(cfg("rwnd_min = \"2mss\"").rwnd_min, 2920);
    assert_eq!(cfg("rwnd_min = \"1B\"").rwnd_min, 1);
    assert_eq!(cfg("rwnd_min = \"2pkt\"").rwnd_min, 3000);
    assert_eq!(cfg("mss = 1000\nrwnd_min = \"1.5mss\"").rwnd_min, 1500);
    assert_eq!(cfg("police = true").police, Some(1460));
    assert_eq!(cfg("police = true\npolice_slack = \"0B\"").police, Some(0));
    assert_eq!(cfg("mss = 1460").mss, 1460);
    let bad = |s: &str, field: &str| {
        let c: Cfg = toml::from_str(s).unwrap();
        let e = c.resolve(1500).unwrap_err();
        assert_eq!(e.field, format!("host.vswitch.{field}"), "{s}: {e:?}");
    };
    bad("rwnd_min = \"0B\"", "rwnd_min");
    bad("rwnd_min = \"xmss\"", "rwnd_min");
    bad("rwnd_min = \"-1mss\"", "rwnd_min");
    bad("rwnd_min = \"5GB\"", "rwnd_min");
    bad("rwnd_min = \"1460\"", "rwnd_min");
    bad("mss = 0", "mss");
    bad("mss = 1461", "mss");
    bad("init_cwnd = 0", "init_cwnd");
    bad("g = 0.0", "g");
    bad("g = 1.5", "g");
    bad("alpha_init = 1.5", "alpha_init");
    bad("alpha_init = -0.1", "alpha_init");
    bad("beta = 1.1", "beta");
    bad("beta_by_priority = [1.0, -1.0]", "beta_by_priority[1]");
    bad("police_slack = \"x\"", "police_slack");
    bad("idle_timeout = \"0s\"", "idle_timeout");
    bad("idle_timeout = \"1\"", "idle_timeout");
    bad("police_slack = \"-1mss\"", "police_slack");
    bad("rwnd_min = \"1000001mss\"", "rwnd_min");
    bad("rwnd_min = \"4294967296B\"", "rwnd_min");
    bad("init_cwnd = 1000001", "init_cwnd");
    // At the edges: accepted.
    for ok in ["mss = 1460", "g = 1.0", "alpha_init = 0.0", "beta = 0.0", "init_cwnd = 1", "init_cwnd = 1000000", "rwnd_min = \"4294967295B\"", "rwnd_min = \"1000000mss\"", "police_slack = \"0mss\""] {
        let c: Cfg = toml::from_str(ok).unwrap();
        assert!(c.resolve(1500).is_ok(), "{ok}");
    }
}

#[test]
fn egress_data_becomes_ect_and_the_receiver_hides_ce_as_the_guest_had_it() {
    let mut a = sending("", 0, 0);
    let mut out = ShimOut::default();
    // A Not-ECT guest: ECT and the reserved bit on the way out...
    let mut p = data(0);
    assert_eq!(a.egress(3, 0, &mut p, &mut out), Action::Pass);
    assert_eq!((p.ecn, p.flags & flags::ACDC_ECT != 0), (Ecn::Ect, true));
    // ...an ECN guest's segment keeps its codepoint and gets no bit.
    let mut q = data(MSS);
    q.ecn = Ecn::Ect;
    a.egress(3, 0, &mut q, &mut out);
    assert_eq!((q.ecn, q.flags & flags::ACDC_ECT), (Ecn::Ect, 0));
    assert_eq!(a.stats.ect_set, 1);
    // At the receiver: marked or not, the Not-ECT guest sees Not-ECT, the ECN guest ECT, never CE.
    let mut r = acdc("");
    for (mut seg, ce, want) in [(p, true, Ecn::NotEct), (q, true, Ecn::Ect), (p, false, Ecn::NotEct), (q, false, Ecn::Ect)] {
        if ce {
            seg.ecn = Ecn::Ce;
        }
        assert_eq!(r.ingress(4, 0, &mut seg, &mut out), Action::Pass);
        assert_eq!(seg.ecn, want);
        assert_eq!(seg.flags & flags::ACDC_ECT, 0);
    }
    let c = r.rcv[&7];
    assert_eq!((c.total, c.ce), (4 * MSS as u32, 2 * MSS as u32));
    assert_eq!(r.stats.ce_bytes, 2 * MSS);
}

#[test]
fn the_receivers_acks_carry_its_counters_and_the_sender_strips_them() {
    let mut r = acdc("");
    let mut out = ShimOut::default();
    let mut s = data(0);
    s.ecn = Ecn::Ce;
    r.ingress(0, 0, &mut s, &mut out);
    r.ingress(0, 0, &mut data(MSS), &mut out);
    let mut a = pkt(flags::ACK, 0, 2 * MSS, 0);
    assert_eq!(r.egress(1, 0, &mut a, &mut out), Action::Pass);
    assert_eq!(a.opt, TcpOpt::AcdcFeedback { total: 2 * MSS as u32, ce: MSS as u32 });
    assert_eq!(a.size, ACK_BYTES, "a bare ACK has room for 12 option bytes in its minimum frame");
    // A bare ACK is no data: it stays Not-ECT and makes no sender state.
    assert_eq!((a.ecn, a.flags & flags::ACDC_ECT, r.snd.len()), (Ecn::NotEct, 0, 0));
    assert!(out.inject.is_empty());
    assert_eq!(r.stats.feedback_options, 1);
    // An ACK of a flow the vSwitch does not receive gets nothing.
    let mut other = a;
    (other.flow, other.opt) = (8, TcpOpt::None);
    r.egress(1, 0, &mut other, &mut out);
    assert_eq!(other.opt, TcpOpt::None);
    // The sender reads the option and removes it before the guest sees the ACK.
    let mut snd = sending("", 0, 2);
    assert_eq!(snd.ingress(2, 0, &mut a, &mut out), Action::Pass);
    assert_eq!(a.opt, TcpOpt::None);
    assert_eq!(a.size, ACK_BYTES);
    // A bare ACK coming in is no data either: no receiver state at the sender's vSwitch.
    assert!(snd.rcv.is_empty());
    // An ACK riding on data (both handlers take it) gets its data size back: payload and headers.
    let mut both = pkt(flags::ACK | flags::DATA, 0, 2 * MSS, 100);
    both.opt = TcpOpt::AcdcFeedback { total: 3 * MSS as u32, ce: MSS as u32 };
    both.size = 100 + HEADER_BYTES + both.opt.bytes();
    snd.ingress(3, 0, &mut both, &mut out);
    assert_eq!((both.opt, both.size), (TcpOpt::None, 100 + HEADER_BYTES));
}

#[test]
fn feedback_that_would_pass_the_mtu_goes_in_a_separate_ack_the_sender_consumes() {
    let mut r = acdc("");
    let mut out = ShimOut::default();
    r.ingress(0, 0, &mut data(0), &mut out);
    // A full segment that also carries an ACK: 1460 + 40 + 12 > 1500.
    let mut both = pkt(flags::ACK | flags::DATA, 0, MSS, 1460);
    assert_eq!(r.egress(1, 0, &mut both, &mut out), Action::Pass);
    assert_eq!((both.opt, both.size), (TcpOpt::None, 1500));
    assert_eq!(out.inject.len(), 1);
    let (to, mut fb) = out.inject.pop().unwrap();
    assert_eq!(to, Toward::Network);
    assert_eq!((fb.payload, fb.size, fb.ack, fb.flags), (0, ACK_BYTES, MSS, flags::ACK | flags::FEEDBACK_ONLY));
    assert_eq!(fb.opt, TcpOpt::AcdcFeedback { total: MSS as u32, ce: 0 });
    assert_eq!(r.stats.feedback_only_acks, 1);
    // 1448 + 40 + 12 = 1500 fits: the option goes on the segment.
    let mut fits = pkt(flags::ACK | flags::DATA, 0, MSS, 1448);
    r.egress(1, 0, &mut fits, &mut out);
    assert_eq!((fits.size, out.inject.len()), (1500, 0));
    assert!(matches!(fits.opt, TcpOpt::AcdcFeedback { .. }));
    // The sender's vSwitch takes the feedback-only ACK for itself: no duplicate ACK, nothing for the guest.
    let mut s = sending("", 0, 3);
    assert_eq!(s.ingress(2, 0, &mut fb, &mut out), Action::Consume);
    assert_eq!(snd(&s).dupacks, 0);
    assert_eq!((snd(&s).fb_total, snd(&s).acked), (MSS as u32, MSS));
    // Its CE bytes count toward α like any ACK's.
    let mut fb2 = fb;
    fb2.opt = TcpOpt::AcdcFeedback { total: 3 * MSS as u32, ce: MSS as u32 };
    assert_eq!(s.ingress(3, 0, &mut fb2, &mut out), Action::Consume);
    assert_eq!((snd(&s).acked, snd(&s).ce_acked), (3 * MSS, MSS));
}

#[test]
fn slow_start_then_congestion_avoidance_only_while_the_guest_fills_the_window() {
    let mut a = sending("", 0, 10);
    let mut out = ShimOut::default();
    // Window-limited (10 segments out, cwnd 10 MSS): slow start adds what each ACK acknowledges.
    a.ingress(3, 0, &mut ack(MSS, MSS as u32, 0), &mut out);
    assert_eq!(snd(&a).cwnd, 11.0 * MSS as f64);
    // Not limited: 9 out, +1 MSS = 10 MSS < 11 MSS: no growth.
    a.ingress(3, 0, &mut ack(2 * MSS, 2 * MSS as u32, 0), &mut out);
    assert_eq!(snd(&a).cwnd, 11.0 * MSS as f64);
    // Congestion avoidance: MSS·newly/cwnd. A cwnd that is no whole number of segments still grows when
    // the guest has all the whole segments it may out (flight + MSS ≥ cwnd, flight before the ACK).
    let mut b = sending("", 0, 5);
    b.snd.get_mut(&7).unwrap().cwnd = 5.5 * MSS as f64;
    b.snd.get_mut(&7).unwrap().ssthresh = 1000.0;
    b.ingress(3, 0, &mut ack(MSS, MSS as u32, 0), &mut out);
    let want = 5.5 * MSS as f64 + MSS as f64 * MSS as f64 / (5.5 * MSS as f64);
    assert!((snd(&b).cwnd - want).abs() < 1e-9, "{} vs {want}", snd(&b).cwnd);
    // 4 out before the ACK: 4 + 1 < 5.6 segments: not limited.
    let before = snd(&b).cwnd;
    b.ingress(3, 0, &mut ack(2 * MSS, 2 * MSS as u32, 0), &mut out);
    assert_eq!(snd(&b).cwnd, before);
}

#[test]
fn alpha_is_dctcps_estimate_over_each_window_and_ce_cuts_once_per_window() {
    let mut a = sending("", 0, 10);
    let mut out = ShimOut::default();
    // The first ACK closes the first window (win_end 0): F = 1460 CE of 1460, α = 15/16 + 1/16 = 1; cut
    // by α/2: 14600 · 0.5 = 7300.
    a.ingress(3, 0, &mut ack(MSS, MSS as u32, MSS as u32), &mut out);
    let s = snd(&a);
    assert_eq!((s.alpha, s.cwnd, s.ssthresh), (1.0, 7300.0, 7300.0));
    assert_eq!(s.win_end, 10 * MSS);
    assert_eq!(a.stats.ecn_cuts, 1);
    // More CE within the same window: no second cut, and no growth on a marked ACK.
    a.ingress(3, 0, &mut ack(2 * MSS, 2 * MSS as u32, 2 * MSS as u32), &mut out);
    assert_eq!((snd(&a).cwnd, a.stats.ecn_cuts), (7300.0, 1));
    // An unmarked ACK in the same window grows it as the guest fills it (8 of 5 segments out: congestion
    // avoidance, cwnd = ssthresh).
    a.ingress(3, 0, &mut ack(3 * MSS, 3 * MSS as u32, 2 * MSS as u32), &mut out);
    assert!((snd(&a).cwnd - (7300.0 + 1460.0 * 1460.0 / 7300.0)).abs() < 1e-9, "{}", snd(&a).cwnd);
    assert!(snd(&a).in_cwr);
    // Over a whole window: the counters since the last update (9 MSS acknowledged, 1 of them CE) give
    // F = 1/9 when snd_una reaches the window's end.
    let mut c = sending("", 0, 10);
    c.ingress(3, 0, &mut ack(MSS, MSS as u32, 0), &mut out); // α = 15/16, window to 10 MSS, no cut
    assert_eq!(snd(&c).alpha, 15.0 / 16.0);
    c.ingress(3, 0, &mut ack(5 * MSS, 5 * MSS as u32, MSS as u32), &mut out); // a cut at α = 15/16
    let cut = 11.0 * MSS as f64 * (1.0 - 15.0 / 32.0); // slow start made it 11 MSS first
    assert!((snd(&c).cwnd - cut).abs() < 1e-6, "{}", snd(&c).cwnd);
    c.ingress(3, 0, &mut ack(10 * MSS, 10 * MSS as u32, MSS as u32), &mut out);
    let f = 1.0 / 9.0;
    assert!((snd(&c).alpha - (15.0 / 16.0 * 15.0 / 16.0 + f / 16.0)).abs() < 1e-12, "{}", snd(&c).alpha);
    assert!(!snd(&c).in_cwr, "CWR ends once snd_una reaches the snd_nxt of the cut");
}

#[test]
fn beta_sets_the_depth_of_the_cut_and_rwnd_min_its_floor() {
    for (extra, prio, want) in [
        ("beta = 0.0", 0, 0.0),  // cut by all of α = 1
        ("beta = 0.5", 0, 0.25), // 1 − α(1 − 1/4)
        ("beta_by_priority = [1.0, 0.5]", 1, 0.25),
        ("beta_by_priority = [1.0, 0.5]", 0, 0.5),
        ("beta = 0.5\nbeta_by_priority = [1.0]", 3, 0.25), // beyond the list: `beta`
    ] {
        let mut a = acdc(extra);
        let mut out = ShimOut::default();
        let mut syn = pkt(flags::SYN, 0, 0, 0);
        syn.prio = prio;
        a.egress(0, 0, &mut syn, &mut out);
        for i in 0..10 {
            a.egress(1, 0, &mut data(i * MSS), &mut out);
        }
        a.ingress(3, 0, &mut ack(MSS, MSS as u32, MSS as u32), &mut out);
        let floor: f64 = 1460.0;
        assert_eq!(snd(&a).cwnd, (14600.0f64 * want).max(floor), "{extra}, priority {prio}");
    }
}

#[test]
fn three_duplicate_acks_halve_the_window_and_a_resend_without_them_is_a_timeout() {
    let mut a = sending("", 0, 10);
    let mut out = ShimOut::default();
    for _ in 0..3 {
        a.ingress(3, 0, &mut ack(0, MSS as u32, 0), &mut out);
    }
    assert_eq!((snd(&a).cwnd, snd(&a).ssthresh, a.stats.loss_cuts), (7300.0, 7300.0, 1));
    // The guest's fast retransmit of snd_una is no timeout; a fourth duplicate is no second cut.
    a.egress(4, 0, &mut data(0), &mut out);
    a.ingress(4, 0, &mut ack(0, MSS as u32, 0), &mut out);
    assert_eq!((snd(&a).cwnd, a.stats.timeouts, a.stats.loss_cuts), (7300.0, 0, 1));
    // Recovery lasts until everything sent before the cut is acknowledged: three duplicates of a partial
    // ACK are no second cut; after an ACK of `recover` three more are.
    a.ingress(5, 0, &mut ack(5 * MSS, 6 * MSS as u32, 0), &mut out);
    for _ in 0..3 {
        a.ingress(5, 0, &mut ack(5 * MSS, 6 * MSS as u32, 0), &mut out);
    }
    assert_eq!((snd(&a).in_recovery, a.stats.loss_cuts), (true, 1));
    a.ingress(6, 0, &mut ack(10 * MSS, 10 * MSS as u32, 0), &mut out);
    assert!(!snd(&a).in_recovery);
    a.egress(6, 0, &mut data(10 * MSS), &mut out);
    for _ in 0..3 {
        a.ingress(7, 0, &mut ack(10 * MSS, 10 * MSS as u32, 0), &mut out);
    }
    assert_eq!((snd(&a).in_recovery, a.stats.loss_cuts), (true, 2));
    // Two duplicates only, then the guest resends snd_una: its RTO fired.
    let mut b = sending("", 0, 10);
    for _ in 0..2 {
        b.ingress(3, 0, &mut ack(0, 0, 0), &mut out);
    }
    b.egress(9, 0, &mut data(0), &mut out);
    assert_eq!((snd(&b).cwnd, snd(&b).ssthresh, b.stats.timeouts), (1460.0, 7300.0, 1));
    // A new segment at snd_una = snd_nxt is no resend.
    let mut c = sending("", 0, 0);
    c.egress(9, 0, &mut data(0), &mut out);
    assert_eq!(c.stats.timeouts, 0);
    // An ACK with data on it is no duplicate.
    let mut d = sending("", 0, 10);
    for _ in 0..3 {
        d.ingress(3, 0, &mut pkt(flags::ACK | flags::DATA, 0, 0, 100), &mut out);
    }
    assert_eq!(d.stats.loss_cuts, 0);
    // Nothing outstanding: no duplicates either.
    let mut e = sending("", 0, 0);
    for _ in 0..3 {
        e.ingress(3, 0, &mut ack(0, 0, 0), &mut out);
    }
    assert_eq!(e.stats.loss_cuts, 0);
}

#[test]
fn the_window_written_is_min_of_the_receivers_and_acdcs_rounded_up_in_the_receivers_scale() {
    let mut out = ShimOut::default();
    for (ws, rcv_field, want) in [
        (0u8, u16::MAX, 14600u16 + 1460), // slow start: 11 MSS after the ACK
        (7, u16::MAX, 16060u64.div_ceil(128) as u16),
        (7, 100, 100), // never above what the receiver offered
        (0, 16060, 16060), // the receiver's own value: left as it is, no rewrite counted
        (14, u16::MAX, 1), // ⌈16060 / 16384⌉
    ] {
        let mut a = sending("", ws, 10);
        let mut p = ack(MSS, MSS as u32, 0);
        p.win = rcv_field;
        a.ingress(3, 0, &mut p, &mut out);
        assert_eq!(p.win, want, "wscale {ws}");
        assert_eq!(snd(&a).adv_wnd, Some((MSS, (want as u64) << ws)));
        assert_eq!(a.stats.rwnd_rewrites, (want < rcv_field) as u64);
    }
    // Never below rwnd_min: a 1-byte cwnd still advertises 1460 B.
    let mut a = sending("", 0, 1);
    a.snd.get_mut(&7).unwrap().cwnd = 1.0;
    let mut p = ack(0, 0, 0);
    a.ingress(3, 0, &mut p, &mut out);
    assert_eq!(p.win, 1460);
    // Without the option in the SYN-ACK, windows are unscaled; SYN-ACKs themselves are left alone.
    let mut b = acdc("");
    b.egress(0, 0, &mut pkt(flags::SYN, 0, 0, 0), &mut out);
    let mut sa = pkt(flags::SYN | flags::ACK, 0, 0, 0);
    b.ingress(1, 0, &mut sa, &mut out);
    assert_eq!((snd(&b).wscale, sa.win), (Some(0), u16::MAX));
}

#[test]
fn policing_drops_what_passes_the_advertised_window_plus_the_slack() {
    let mut out = ShimOut::default();
    for (extra, police) in [("police = true", true), ("", false)] {
        let mut a = sending(extra, 0, 1);
        let mut p = ack(MSS, MSS as u32, 0);
        p.win = 3000;
        a.ingress(3, 0, &mut p, &mut out);
        // Allowed: up to ack + 3000 + 1460 = 5920.
        let mut ok = pkt(flags::DATA, 4460, 0, 1460);
        assert_eq!(a.egress(4, 0, &mut ok, &mut out), Action::Pass);
        let mut over = pkt(flags::DATA, 4461, 0, 1460);
        let want = if police { Action::Drop } else { Action::Pass };
        assert_eq!(a.egress(4, 0, &mut over, &mut out), want, "{extra}");
        assert_eq!(a.stats.policed, police as u64);
        assert_eq!(snd(&a).snd_nxt, if police { 5920 } else { 5921 }, "a policed segment was never sent");
    }
}

#[test]
fn idle_flows_are_forgotten_after_the_timeout() {
    let mut a = sending("idle_timeout = \"10ms\"", 0, 1);
    let mut out = ShimOut::default();
    let ms = crate::units::MS;
    a.ingress(5 * ms, 0, &mut ack(MSS, MSS as u32, 0), &mut out);
    // The first sweep, at 10 ms (another flow's packet): flow 7, last seen at 5 ms, is kept.
    let mut other = data(0);
    other.flow = 9;
    a.egress(10 * ms, 0, &mut other, &mut out);
    assert!(a.snd.contains_key(&7));
    // The next sweep, at 20 ms or later: 15 ms idle, forgotten; flow 9 (10 ms) exactly at the timeout too.
    a.egress(20 * ms, 0, &mut data(0), &mut out);
    assert!(!a.snd.contains_key(&9));
    assert_eq!(snd(&a).snd_nxt, MSS, "flow 7 starts afresh");
    assert_eq!(snd(&a).cwnd, 14600.0);
}

/// AC/DC wrapped with the invariants the issue names, checked on every packet of a real run: the window
/// written into an ACK never exceeds what the guest's receiver advertised and never goes below
/// `rwnd_min` (unless the receiver itself offered less), and the guest never has a byte in flight past
/// the highest ACK it was given plus the window of the last ACK it was given.
pub struct Probe {
    pub inner: AcDc,
    /// Per flow: (highest ACK, last window in bytes) handed to the sending guest.
    given: HashMap<u32, (u64, u64)>,
    pub violations: Vec<String>,
    pub segments: u64,
    pub acks: u64,
}

impl Probe {
    pub fn new(p: Params) -> Probe {
        Probe { inner: AcDc::new(p), given: HashMap::new(), violations: vec![], segments: 0, acks: 0 }
    }
}

impl Shim for Probe {
    fn egress(&mut self, now: Time, id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
        if pkt.payload > 0 {
            if let Some(&(a, w)) = self.given.get(&pkt.flow) {
                let end = pkt.seq + pkt.payload as u64;
                if end > a + w {
                    self.violations.push(format!("flow {} sent to {end} past ack {a} + window {w}", pkt.flow));
                }
                self.segments += 1;
            }
        }
        self.inner.egress(now, id, pkt, out)
    }
    fn ingress(&mut self, now: Time, id: PktId, pkt: &mut Packet, out: &mut ShimOut) -> Action {
        let before = pkt.win;
        let ack = pkt.has(flags::ACK) && !pkt.has(flags::SYN) && !pkt.has(flags::FEEDBACK_ONLY);
        let action = self.inner.ingress(now, id, pkt, out);
        if ack && action == Action::Pass {
            let ws = self.inner.snd[&pkt.flow].wscale.expect("the handshake gave the window scale");
            let (offered, wnd) = ((before as u64) << ws, (pkt.win as u64) << ws);
            if pkt.win > before {
                self.violations.push(format!("flow {}: window raised from {before} to {}", pkt.flow, pkt.win));
            }
            if wnd < self.inner.p.rwnd_min.min(offered) {
                self.violations.push(format!("flow {}: window {wnd} B below rwnd_min", pkt.flow));
            }
            let g = self.given.entry(pkt.flow).or_insert((0, 0));
            *g = (g.0.max(pkt.ack), wnd);
            self.acks += 1;
        }
        action
    }
}

fn probe_run(senders: u32, ccs: &[&str], sizes: &[u64], mtu: u32, rwnd_min: &str, wscale: u8, buffer_kb: u32, delack: u32) -> (Vec<String>, u64, u64) {
    let flows: Vec<String> = (0..senders)
        .map(|i| {
            let size = sizes[i as usize % sizes.len()];
            let size = if size == 0 { "\"inf\"".to_string() } else { format!("\"{size}B\"") };
            format!("{{ src = {i}, dst = {senders}, size = {size}, start = \"{}us\" }}", i * 5)
        })
        .collect();
    let mut t = format!(
        r#"
seed = 5
stop = {{ time = "15ms" }}
[topology]
kind = "star"
hosts = {hosts}
link = {{ rate = "10Gbps", delay = "3us" }}
[switch]
buffer = "{buffer_kb}KB"
mtu = {mtu}
aqm = {{ kind = "dctcp_red", threshold = "30KB" }}
[host]
transport = {{ kind = "tcp", handshake = true, min_rto = "1ms", wscale = {wscale}, rwnd = "1MB", delayed_ack = {delack} }}
vswitch = {{ kind = "acdc", rwnd_min = "{rwnd_min}" }}
"#,
        hosts = senders + 1
    );
    for (i, f) in flows.iter().enumerate() {
        let cc = ccs[i % ccs.len()];
        t += &format!("[[traffic]]\nkind = \"flows\"\ntransport = {{ cc = \"{cc}\" }}\nlist = [{f}]\n");
    }
    let mut sim = crate::Sim::from_toml(&t).unwrap();
    let c: Cfg = toml::from_str(&format!("rwnd_min = \"{rwnd_min}\"")).unwrap();
    let p = c.resolve(mtu).unwrap();
    for h in sim.hosts.hosts.iter_mut() {
        h.vswitch = Some(VSwitch::Probe(Box::new(Probe::new(p.clone()))));
    }
    sim.run_until(u64::MAX);
    let mut v = vec![];
    let (mut segs, mut acks) = (0, 0);
    for h in &sim.hosts.hosts {
        if let Some(VSwitch::Probe(pr)) = &h.vswitch {
            v.extend(pr.violations.iter().cloned());
            segs += pr.segments;
            acks += pr.acks;
        }
    }
    (v, segs, acks)
}

use crate::host::vswitch::VSwitch;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random incasts (1–8 senders, mixed guest controls, sizes from 3 KB to long-lived, small buffers that
    /// drop, window scales 0–8, MTU 1500 or 9000, byte floors from 1 B to 2 MSS, delayed ACKs).
    #[test]
    fn the_enforced_window_bounds_the_guest_and_stays_within_the_receivers_and_the_floor(
        senders in 1u32..9,
        ccs in proptest::sample::subsequence(vec!["reno", "cubic", "dctcp", "vegas", "illinois", "highspeed"], 1..4),
        sizes in proptest::collection::vec(prop_oneof![Just(0u64), 3_000u64..3_000_000], 1..4),
        mtu in prop_oneof![Just(1500u32), Just(9000)],
        rwnd_min in prop_oneof![Just("1B"), Just("700B"), Just("1460B"), Just("2mss")],
        wscale in 0u8..9,
        buffer_kb in 60u32..400,
        delack in 1u32..3,
    ) {
        let (v, segs, acks) = probe_run(senders, &ccs, &sizes, mtu, rwnd_min, wscale, buffer_kb, delack);
        prop_assert!(v.is_empty(), "{} violations, first: {:?}", v.len(), v.first());
        eprintln!("{senders} senders {ccs:?} {sizes:?} mtu {mtu} {rwnd_min} ws {wscale}: {segs} segments, {acks} ACKs checked");
        // The probe checks segments sent after the guest was given a window by an ACK: a flow that fits in
        // the initial window (10 segments, sent at the SYN-ACK) gives it none to check.
        let beyond_iw = (0..senders as usize).any(|i| {
            let s = sizes[i % sizes.len()];
            s == 0 || s > 10 * (mtu as u64 - 40)
        });
        if beyond_iw {
            prop_assert!(segs > 0 && acks > 0);
        }
    }
}

#[test]
fn the_probe_sees_a_guest_that_ignores_the_window() {
    // The probe itself can fail: a window it was not given is a violation.
    let mut p = Probe::new(cfg(""));
    let mut out = ShimOut::default();
    p.inner = sending("", 0, 0);
    let mut a = ack(MSS, MSS as u32, 0);
    a.win = 1000;
    p.ingress(1, 0, &mut a, &mut out);
    p.egress(2, 0, &mut pkt(flags::DATA, MSS, 0, 1000), &mut out);
    assert!(p.violations.is_empty());
    p.egress(2, 0, &mut pkt(flags::DATA, MSS, 0, 1001), &mut out);
    assert_eq!(p.violations.len(), 1);
}

#[test]
fn stats_add_field_by_field() {
    let a = Stats { feedback_options: 1, feedback_only_acks: 2, ect_set: 3, ce_bytes: 4, rwnd_rewrites: 5, ecn_cuts: 6, loss_cuts: 7, timeouts: 8, policed: 9 };
    let mut s = a;
    s += Stats { feedback_options: 10, feedback_only_acks: 20, ect_set: 30, ce_bytes: 40, rwnd_rewrites: 50, ecn_cuts: 60, loss_cuts: 70, timeouts: 80, policed: 90 };
    assert_eq!(s, Stats { feedback_options: 11, feedback_only_acks: 22, ect_set: 33, ce_bytes: 44, rwnd_rewrites: 55, ecn_cuts: 66, loss_cuts: 77, timeouts: 88, policed: 99 });
}

#[test]
fn the_sweep_runs_once_per_timeout_and_forgets_both_ends_idle_that_long() {
    let ms = crate::units::MS;
    let mut a = acdc("idle_timeout = \"10ms\"");
    let mut out = ShimOut::default();
    let at = |flow: u32, p: Packet| Packet { flow, ..p };
    a.egress(0, 0, &mut at(1, data(0)), &mut out); // sender of flow 1, last seen at 0
    a.ingress(0, 0, &mut at(2, data(0)), &mut out); // receiver of flow 2, last seen at 0
    a.egress(5 * ms, 0, &mut at(3, data(0)), &mut out); // sender of flow 3, at 5 ms
    a.ingress(5 * ms, 0, &mut at(4, data(0)), &mut out); // receiver of flow 4, at 5 ms
    // The first sweep, exactly at 10 ms: 10 ms idle is forgotten, 5 ms is kept.
    a.egress(10 * ms, 0, &mut at(9, data(0)), &mut out);
    assert!(!a.snd.contains_key(&1) && !a.rcv.contains_key(&2));
    assert!(a.snd.contains_key(&3) && a.rcv.contains_key(&4));
    // At 16 ms flows 3 and 4 have been idle 11 ms, but the next sweep is not before 20 ms.
    a.egress(16 * ms, 0, &mut at(9, data(MSS)), &mut out);
    assert!(a.snd.contains_key(&3) && a.rcv.contains_key(&4));
    a.egress(20 * ms, 0, &mut at(9, data(2 * MSS)), &mut out);
    assert!(!a.snd.contains_key(&3) && !a.rcv.contains_key(&4) && a.snd.contains_key(&9));
}
