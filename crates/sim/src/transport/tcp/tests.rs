//! TCP against RFC 5681/6582/6298/3168/8257 behaviour, on hand-built ACK and data sequences.

use super::cc::CcCfg;
use super::*;
use crate::net::packet::Ecn;

fn params(cc: CcCfg, ecn: bool) -> TcpParams {
    TcpParams {
        cc,
        ecn,
        mss: 1000,
        init_cwnd: 4,
        min_rto: 5 * crate::units::MS,
        max_rto: 60 * SEC,
        delack: 1,
        delack_timeout: crate::units::MS,
        rwnd: 1 << 30,
        wscale: 14,
        handshake: false,
        ect_control: false,
        dctcp_g: 1.0 / 16.0,
        tsq_limit: u64::MAX,
        slow_start_after_idle: true,
    }
}

fn ack(a: u64, ece: bool, ts: Time) -> Packet {
    Packet {
        ack: a,
        ts,
        src: 1,
        dst: 0,
        size: 64,
        payload: 0,
        win: u16::MAX,
        flags: flags::ACK | if ece { flags::ECE } else { 0 },
        ..Packet::blank()
    }
}

fn segs(out: &[Out]) -> Vec<u64> {
    out.iter().filter_map(|o| if let Out::Seg { seq, .. } = o { Some(*seq) } else { None }).collect()
}

#[test]
fn initial_window_then_slow_start() {
    let mut c = Conn::new(0, 100_000, params(CcCfg::Reno(Default::default()), false));
    let mut out = vec![];
    c.start(0, &mut out);
    assert_eq!(segs(&out), vec![0, 1000, 2000, 3000]);
    out.clear();
    c.on_ack(10, &ack(1000, false, 0), &mut out);
    // cwnd 4000 → 5000 (slow start): two new segments leave for one acked.
    assert_eq!(segs(&out), vec![4000, 5000]);
    assert_eq!(c.w.cwnd, 5000.0);
}

#[test]
fn three_dupacks_fast_retransmit_then_newreno_recovery() {
    let mut c = Conn::new(0, 100_000, params(CcCfg::Reno(Default::default()), false));
    let mut out = vec![];
    c.w.cwnd = 10_000.0;
    c.start(0, &mut out);
    assert_eq!(segs(&out).len(), 10);
    out.clear();
    // Segment 0 lost: dupacks for 0.
    for _ in 0..2 {
        c.on_ack(10, &ack(0, false, 0), &mut out);
    }
    assert!(segs(&out).is_empty());
    c.on_ack(10, &ack(0, false, 0), &mut out);
    assert_eq!(segs(&out), vec![0], "retransmit snd_una on the third dupack");
    // ssthresh = FlightSize/2 = 5000; cwnd = ssthresh + 3 MSS
    assert_eq!(c.w.ssthresh, 5000.0);
    assert_eq!(c.w.cwnd, 8000.0);
    out.clear();
    // Partial ACK (segment 5000 also lost): retransmit it, deflate.
    c.on_ack(20, &ack(5000, false, 0), &mut out);
    assert_eq!(segs(&out)[0], 5000);
    assert_eq!(c.retransmits, 2);
    out.clear();
    // Full ACK: leave recovery at min(ssthresh, flight + MSS).
    c.on_ack(30, &ack(10_000, false, 0), &mut out);
    assert!(!c.in_recovery);
    assert!(c.w.cwnd <= 5000.0);
}

#[test]
fn rto_backs_off_exponentially_from_min_rto() {
    let mut c = Conn::new(0, 100_000, params(CcCfg::Reno(Default::default()), false));
    let mut out = vec![];
    c.start(0, &mut out);
    assert_eq!(c.rto_timer.deadline, Some(5 * crate::units::MS));
    let mut now = 0;
    let mut gaps = vec![];
    for _ in 0..4 {
        let d = c.rto_timer.deadline.unwrap();
        gaps.push(d - now);
        now = d;
        out.clear();
        c.on_rto(now, &mut out);
        assert_eq!(segs(&out), vec![0], "go back to snd_una with cwnd = 1 MSS");
    }
    let ms = crate::units::MS;
    assert_eq!(gaps, vec![5 * ms, 10 * ms, 20 * ms, 40 * ms]);
    assert_eq!(c.timeouts, 4);
    // A new ACK resets the backoff.
    out.clear();
    c.on_ack(now + 100, &ack(1000, false, now), &mut out);
    assert_eq!(c.rto_timer.deadline, Some(now + 100 + 5 * ms));
}

#[test]
fn rto_backoff_stops_at_max_rto() {
    let ms = crate::units::MS;
    let mut p = params(CcCfg::Reno(Default::default()), false);
    p.max_rto = 20 * ms;
    let mut c = Conn::new(0, 100_000, p);
    let mut out = vec![];
    c.start(0, &mut out);
    let mut now = 0;
    let mut gaps = vec![];
    for _ in 0..5 {
        let d = c.rto_timer.deadline.unwrap();
        gaps.push(d - now);
        now = d;
        c.on_rto(now, &mut out);
    }
    assert_eq!(gaps, vec![5 * ms, 10 * ms, 20 * ms, 20 * ms, 20 * ms]);
}

#[test]
fn congestion_control_sees_latest_smoothed_and_minimum_rtt() {
    let mut c = Conn::new(0, 100_000, params(CcCfg::Reno(Default::default()), false));
    let mut out = vec![];
    c.start(0, &mut out);
    c.on_ack(100, &ack(1000, false, 0), &mut out);
    assert_eq!(c.ack_info(100, 1000, false).rtt, Rtt { latest: 100, srtt: 100, min: 100 });
    c.on_ack(160, &ack(2000, true, 110), &mut out);
    // SRTT ← 7/8·100 + 1/8·50 (integer ps), min 50.
    let info = c.ack_info(160, 1000, true);
    assert_eq!(info.rtt, Rtt { latest: 50, srtt: 93, min: 50 });
    assert_eq!((info.acked, info.marked), (1000, 1000));
    // A duplicate ACK gives no new sample.
    c.on_ack(170, &ack(2000, false, 0), &mut out);
    assert_eq!(c.ack_info(170, 0, false).rtt.latest, 0);
}

#[test]
fn ecn_star_halves_once_per_window() {
    let mut c = Conn::new(0, 1_000_000, params(CcCfg::Reno(Default::default()), true));
    let mut out = vec![];
    c.w.cwnd = 20_000.0;
    c.w.ssthresh = 20_000.0;
    c.start(0, &mut out);
    out.clear();
    c.on_ack(10, &ack(1000, true, 0), &mut out);
    assert_eq!(c.w.cwnd, 10_000.0);
    // More ECE in the same window: no further reduction.
    for k in 2..14 {
        c.on_ack(10 + k, &ack(k * 1000, true, 0), &mut out);
    }
    assert!(c.w.cwnd >= 10_000.0 && c.w.cwnd < 11_500.0, "{}", c.w.cwnd);
    // CWR is set on the first segment sent after the reduction.
    let cwr = out.iter().find_map(|o| if let Out::Seg { flags: f, .. } = o { Some(f & flags::CWR != 0) } else { None });
    assert_eq!(cwr, Some(true));
    // After the window that was in flight at the reduction is acked, ECE reduces again.
    let before = c.w.cwnd;
    let end = c.snd_nxt;
    c.on_ack(100, &ack(end, true, 0), &mut out);
    assert!(c.w.cwnd < before);
}

#[test]
fn dctcp_receiver_echoes_ce_exactly() {
    let mut p = params(CcCfg::Dctcp(Default::default()), true);
    p.delack = 2;
    let mut c = Conn::new(0, 100_000, p);
    let mut data = ack(0, false, 0);
    data.flags = flags::DATA;
    data.payload = 1000;
    let mut out = vec![];
    let mut eces = vec![];
    for (i, ce) in [false, false, true, true, false].iter().enumerate() {
        data.seq = i as u64 * 1000;
        data.ecn = if *ce { Ecn::Ce } else { Ecn::Ect };
        c.on_data(0, &data, &mut out);
        for o in out.drain(..) {
            if let Out::Ack { ack, flags: f, .. } = o {
                eces.push((ack, f & flags::ECE != 0));
            }
        }
    }
    // Every ACK covers only packets with the CE state it echoes.
    assert_eq!(eces, vec![(2000, false), (3000, true), (4000, true), (5000, false)]);
}
#[test]
fn ranges_merge() {
    let mut v = vec![];
    insert_range(&mut v, 10, 20);
    insert_range(&mut v, 30, 40);
    insert_range(&mut v, 20, 30);
    assert_eq!(v, vec![(10, 40)]);
    insert_range(&mut v, 50, 60);
    insert_range(&mut v, 5, 8);
    assert_eq!(v, vec![(5, 8), (10, 40), (50, 60)]);
}

#[test]
fn traces_show_alpha_only_for_dctcp() {
    // `flow_trace.alpha`: NaN for a control without one, DCTCP's estimate (1 at the start, RFC 8257) otherwise.
    assert!(Conn::new(0, 1000, params(CcCfg::Reno(Default::default()), true)).cc.alpha().is_nan());
    let mut c = Conn::new(0, 100_000, params(CcCfg::Dctcp(Default::default()), true));
    assert_eq!(c.cc.alpha(), 1.0);
    // Through the connection (the trait's hooks, not the algorithm's own methods): the first ACK closes the
    // first observation window with F = 0, so α = (1 − 1/16)·1.
    let mut out = vec![];
    c.start(0, &mut out);
    c.on_ack(10, &ack(1000, false, 0), &mut out);
    assert_eq!(c.cc.alpha(), 15.0 / 16.0);
}

#[test]
fn dctcp_never_cuts_below_two_segments() {
    // α = 1 halves the window on ECE: from 2 MSS that would be 1 MSS; DCTCP floors it at 2 MSS (Linux
    // tcp_dctcp: max(cwnd·(1 − α/2), 2)). Reno's own floor is 2 MSS too (RFC 5681).
    for cc in [CcCfg::Dctcp(Default::default()), CcCfg::Reno(Default::default())] {
        let mut c = Conn::new(0, 1_000_000, params(cc, true));
        let mut out = vec![];
        c.start(0, &mut out);
        c.w.cwnd = 2000.0;
        c.w.ssthresh = 2000.0;
        c.on_ack(10, &ack(1000, true, 0), &mut out);
        assert_eq!(c.w.cwnd, 2000.0, "{cc:?}");
    }
}

/// Runs one connection to completion by handing its segments to its receiver end and the ACKs back, in
/// order, without loss. Returns the length of every data segment sent.
fn run_lossless(c: &mut Conn) -> Vec<u32> {
    let mut lens = vec![];
    let mut out = vec![];
    let mut now = 0;
    c.start(now, &mut out);
    for _ in 0..10_000 {
        if out.is_empty() {
            break;
        }
        now += 1000;
        for o in std::mem::take(&mut out) {
            match o {
                Out::Seg { seq, len, flags: f, ts } => {
                    lens.push(len);
                    let mut p = ack(0, false, ts);
                    (p.seq, p.payload, p.flags) = (seq, len, f);
                    c.on_data(now, &p, &mut out);
                }
                Out::Ack { ack: a, win, ts_echo, .. } => {
                    let mut p = ack(a, false, ts_echo);
                    p.win = win;
                    c.on_ack(now, &p, &mut out);
                }
            }
        }
    }
    assert!(c.closed(), "the flow did not complete");
    lens
}

#[test]
fn a_peer_window_below_one_mss_sends_segments_of_that_size() {
    // rwnd 500 B, MSS 1000: each segment is the whole usable window (rule 3: 500 ≥ 500/2; rule 4 too).
    // A sender that always sent a full MSS would send 1000-byte segments beyond the window.
    let mut p = params(CcCfg::Reno(Default::default()), false);
    (p.rwnd, p.wscale) = (500, 0);
    let lens = run_lossless(&mut Conn::new(0, 3200, p));
    assert_eq!(lens, vec![500, 500, 500, 500, 500, 500, 200]);
}

#[test]
fn a_cwnd_below_one_mss_sends_it_when_nothing_is_in_flight() {
    // The peer's window is 1 GB, so rule 3 cannot fire: a 600-byte cwnd is sent whole only because nothing
    // is in flight (rule 4), and nothing more until it is acknowledged.
    let mut c = Conn::new(0, 10_000, params(CcCfg::Reno(Default::default()), false));
    c.w.cwnd = 600.0;
    let mut out = vec![];
    c.start(0, &mut out);
    assert_eq!(out, vec![Out::Seg { seq: 0, len: 600, flags: flags::DATA, ts: 0 }]);
}

#[test]
fn short_segments_wait_while_the_usable_window_is_below_half_the_largest_offered() {
    let mut p = params(CcCfg::Reno(Default::default()), false);
    (p.rwnd, p.wscale) = (800, 0);
    let mut c = Conn::new(0, 10_000, p);
    let lens = |out: &mut Vec<Out>| -> Vec<u32> {
        out.drain(..).filter_map(|o| if let Out::Seg { len, .. } = o { Some(len) } else { None }).collect()
    };
    let mut out = vec![];
    c.start(0, &mut out);
    assert_eq!(lens(&mut out), vec![800]);
    let mut a = ack(400, false, 0);
    a.win = 800;
    // 400 acknowledged: U = 400 ≥ 800/2 — send it (rule 3), with data still in flight.
    c.on_ack(10, &a, &mut out);
    assert_eq!(lens(&mut out), vec![400]);
    // 100 more: U = 100 < 400 and data in flight — wait rather than send a silly 100-byte segment.
    a.ack = 500;
    c.on_ack(20, &a, &mut out);
    assert_eq!(lens(&mut out), Vec::<u32>::new());
    // Everything acknowledged: the whole window again.
    a.ack = 1200;
    c.on_ack(30, &a, &mut out);
    assert_eq!(lens(&mut out), vec![800]);
    // A zero window with nothing in flight sends nothing: no zero-length segment (window probes are
    // not modelled; no receiver here offers 0).
    (a.ack, a.win) = (2000, 0);
    c.on_ack(40, &a, &mut out);
    assert_eq!(lens(&mut out), Vec::<u32>::new());
}

#[test]
fn windows_of_an_mss_or_more_send_full_segments_and_the_short_tail() {
    let mut c = Conn::new(0, 4500, params(CcCfg::Reno(Default::default()), false));
    let lens = run_lossless(&mut c);
    assert_eq!(lens, vec![1000, 1000, 1000, 1000, 500]);
}

/// A data segment of `len` bytes at `seq` arriving at the receiver.
fn data(seq: u64, len: u32) -> Packet {
    Packet { seq, ack: 0, payload: len, size: len + 40, flags: flags::DATA, ..ack(0, false, 0) }
}

/// A persistent connection's next message: the bytes go after the first's, the receiver is complete
/// again only when it holds them, and the window the first message grew is the one the second starts from.
#[test]
fn append_writes_after_what_was_written_with_the_window_it_left() {
    let mut c = Conn::new(0, 8000, params(CcCfg::Reno(Default::default()), false));
    let mut out = vec![];
    c.start(0, &mut out);
    assert_eq!(segs(&out), vec![0, 1000, 2000, 3000]);
    out.clear();
    // Slow start: each ACK adds one MSS while the window limits; after the second, the flow has sent all.
    for a in [1000, 2000, 3000, 4000] {
        c.on_ack(10, &ack(a, false, 0), &mut out);
    }
    assert_eq!(segs(&out), vec![4000, 5000, 6000, 7000]);
    for s in (0..8).map(|i| i * 1000) {
        let done = c.on_data(15, &data(s, 1000), &mut vec![]);
        assert_eq!(done, s == 7000);
    }
    out.clear();
    for a in [5000, 6000, 7000, 8000] {
        c.on_ack(20, &ack(a, false, 0), &mut out);
    }
    assert!(segs(&out).is_empty() && c.sender_done() && c.closed());
    assert_eq!((c.w.cwnd, c.delivered()), (6000.0, 8000));
    // The second message, well within an RTO: six segments at once (not the initial four) from where the
    // first ended.
    c.append(10_000, 30, &mut out);
    assert_eq!(segs(&out), (8..14).map(|i| i * 1000).collect::<Vec<_>>());
    assert!(!c.closed() && c.finished_at.is_none());
    for i in 8..17 {
        let done = c.on_data(35, &data(i * 1000, 1000), &mut vec![]);
        assert!(!done, "the second message ends at 18000");
    }
    assert_eq!(c.delivered(), 17_000);
    assert!(c.on_data(36, &data(17_000, 1000), &mut vec![]));
}

/// RFC 2861 as Linux's `tcp_cwnd_restart`: after more than one RTO with nothing in flight, the window
/// halves once per RTO idle down to min(init_cwnd, cwnd), and ssthresh keeps ¾ of the old window; off
/// with `slow_start_after_idle = false`, and not within one RTO.
#[test]
fn an_idle_connection_restarts_its_window() {
    // The last segment leaves at 0; the application writes again `idle` later.
    let run = |ss_after_idle: bool, idle: Time| {
        let mut p = params(CcCfg::Reno(Default::default()), false);
        p.slow_start_after_idle = ss_after_idle;
        let mut c = Conn::new(0, 4000, p);
        let mut out = vec![];
        c.start(0, &mut out);
        (c.w.cwnd, c.w.ssthresh) = (64_000.0, 20_000.0);
        c.on_ack(10, &ack(4000, false, 0), &mut out);
        assert_eq!(c.current_rto(), 5 * crate::units::MS);
        out.clear();
        c.append(1_000_000, idle, &mut out);
        (c.w.cwnd, c.w.ssthresh, segs(&out).len())
    };
    let rto = 5 * crate::units::MS;
    assert_eq!(run(true, rto), (64_000.0, 20_000.0, 64), "idle for one RTO, not more: nothing changes");
    assert_eq!(run(true, rto * 5 / 2), (16_000.0, 48_000.0, 16), "2.5 RTOs idle: two halvings");
    assert_eq!(run(true, 100 * rto), (4000.0, 48_000.0, 4), "long idle: the initial window");
    assert_eq!(run(false, 100 * rto), (64_000.0, 20_000.0, 64), "slow_start_after_idle = false keeps the window");
}
