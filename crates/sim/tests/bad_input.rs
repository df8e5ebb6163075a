//! Bad input is rejected before the run with one message naming the field.

use dcnlab_sim::Sim;

const BASE: &str = r#"
stop = { all_flows_done = true, max_time = "1s" }
[topology]
kind = "star"
hosts = 4
link = { rate = "10Gbps", delay = "1us" }
[switch]
buffer = "1MB"
aqm = { kind = "dctcp_red", threshold = "65KB" }
[host]
transport = { kind = "tcp", cc = "dctcp" }
[[traffic]]
kind = "poisson"
sizes = "web_search"
load = 0.5
flows = 10
"#;

fn err(text: &str) -> (String, String) {
    match Sim::from_toml(text) {
        Ok(_) => panic!("accepted bad input:\n{text}"),
        Err(e) => (e.field.clone(), e.to_string()),
    }
}

fn replaced(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

#[test]
fn base_is_valid() {
    Sim::from_toml(BASE).unwrap();
}

#[test]
fn unknown_keys() {
    let (f, m) = err(&replaced("hosts = 4", "hosts = 4\nhostz = 5"));
    assert_eq!(f, "topology.hostz");
    assert!(m.contains("hostz"), "{m}");
    let (f, m) = err(&replaced("load = 0.5", "load = 0.5\nlaod = 0.6"));
    assert!(f.starts_with("traffic"), "{f}");
    assert!(m.contains("laod"), "{m}");
    let (f, m) = err(&format!("{BASE}\nsedd = 3\n"));
    assert!(m.contains("sedd"), "{f} {m}");
    let (f, m) = err(&replaced("threshold = \"65KB\"", "threshold = \"65KB\", thresold = \"1KB\""));
    assert_eq!(f, "switch.aqm.thresold");
    assert!(m.contains("thresold"), "{m}");
}

#[test]
fn unknown_algorithm_and_topology_names() {
    let (f, m) = err(&replaced("cc = \"dctcp\"", "cc = \"dctpc\""));
    assert_eq!(f, "host.transport.cc");
    assert!(m.contains("dctpc") && m.contains("reno"), "{m}");
    let (f, m) = err(&replaced("kind = \"dctcp_red\"", "kind = \"ecn_sharpp\""));
    assert_eq!(f, "switch.aqm.kind");
    assert!(m.contains("ecn_sharpp") && m.contains("droptail"), "{m}");
    let (f, m) = err(&replaced("kind = \"star\"", "kind = \"torus\""));
    assert_eq!(f, "topology.kind");
    assert!(m.contains("torus") && m.contains("leaf_spine"), "{m}");
    let (f, m) = err(&replaced("kind = \"poisson\"", "kind = \"poison\""));
    assert!(f.starts_with("traffic"), "{f}");
    assert!(m.contains("poison"), "{m}");
}

#[test]
fn bad_or_missing_units() {
    let (f, m) = err(&replaced("rate = \"10Gbps\"", "rate = \"10Gbs\""));
    assert_eq!(f, "topology.link.rate");
    assert!(m.contains("Gbps"), "{m}");
    let (f, m) = err(&replaced("rate = \"10Gbps\"", "rate = 10"));
    assert_eq!(f, "topology.link.rate");
    assert!(m.contains("unit"), "{m}");
    let (f, m) = err(&replaced("delay = \"1us\"", "delay = \"1\""));
    assert_eq!(f, "topology.link.delay");
    assert!(m.contains("no unit"), "{m}");
    let (f, _) = err(&replaced("buffer = \"1MB\"", "buffer = \"1 megabyte\""));
    assert_eq!(f, "switch.buffer");
    let (f, _) = err(&replaced("max_time = \"1s\"", "max_time = 1.5"));
    assert_eq!(f, "stop.max_time");
}

#[test]
fn zero_or_negative_rates_and_sizes() {
    let (f, m) = err(&replaced("rate = \"10Gbps\"", "rate = \"0Gbps\""));
    assert_eq!(f, "topology.link.rate");
    assert!(m.contains("greater than zero"), "{m}");
    let (f, _) = err(&replaced("rate = \"10Gbps\"", "rate = \"-10Gbps\""));
    assert_eq!(f, "topology.link.rate");
    let (f, _) = err(&replaced("threshold = \"65KB\"", "threshold = \"-5KB\""));
    assert_eq!(f, "switch.aqm.threshold");
    let text = BASE.replace(
        "kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10",
        "kind = \"flows\"\nlist = [{ src = 0, dst = 1, size = \"0B\" }]",
    );
    let (f, _) = err(&text);
    assert_eq!(f, "traffic[0].list[0].size");
    let (f, _) = err(&replaced("buffer = \"1MB\"", "buffer = \"100B\""));
    assert_eq!(f, "switch.buffer");
}

#[test]
fn loads_out_of_range() {
    for bad in ["0.0", "-0.2", "1.5"] {
        let (f, m) = err(&replaced("load = 0.5", &format!("load = {bad}")));
        assert_eq!(f, "traffic[0].load", "{bad}");
        assert!(m.contains("(0, 1]"), "{m}");
    }
}

#[test]
fn cdf_file_not_monotone_or_missing() {
    let dir = std::env::temp_dir().join(format!("dcnlab-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.cdf");
    std::fs::write(&p, "0 0\n1000 0.5\n800 0.7\n5000 1.0\n").unwrap();
    let (f, m) = err(&replaced("sizes = \"web_search\"", &format!("sizes = \"{}\"", p.display())));
    assert_eq!(f, "traffic[0].sizes");
    assert!(m.contains("monotone"), "{m}");
    let (f, m) = err(&replaced("sizes = \"web_search\"", "sizes = \"web_serach\""));
    assert_eq!(f, "traffic[0].sizes");
    assert!(m.contains("web_search") && m.contains("built-in"), "{m}");
}

#[test]
fn flow_endpoints_must_exist() {
    let text = BASE.replace(
        "kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10",
        "kind = \"flows\"\nlist = [{ src = 0, dst = 9, size = \"10KB\" }]",
    );
    let (f, m) = err(&text);
    assert_eq!(f, "traffic[0].list[0].dst");
    assert!(m.contains("host 9 does not exist") && m.contains("0–3"), "{m}");
    let (f, _) = err(&replaced("flows = 10", "flows = 10\nsrc = [0, 7]"));
    assert_eq!(f, "traffic[0].src");
    let text = BASE.replace(
        "kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10",
        "kind = \"incast\"\nsenders = \"0-2\"\nreceiver = 4\nsize = \"10KB\"\nat = \"0us\"",
    );
    let (f, _) = err(&text);
    assert_eq!(f, "traffic[0].receiver");
    let incast = |extra: &str| {
        BASE.replace(
            "kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10",
            &format!("kind = \"incast\"\nsenders = \"0-2\"\nreceiver = 3\nsize = \"10KB\"\nat = \"0us\"\n{extra}"),
        )
    };
    Sim::from_toml(&incast("flows = 7\nsize_max = \"20KB\"")).unwrap();
    let (f, m) = err(&incast("size_max = \"5KB\""));
    assert_eq!(f, "traffic[0].size_max");
    assert!(m.contains("≥ size"), "{m}");
    let (f, _) = err(&incast("flows = 0"));
    assert_eq!(f, "traffic[0].flows");
    let (f, _) = err(&incast("senders = []").replace("senders = \"0-2\"\n", ""));
    assert_eq!(f, "traffic[0].senders");
}

#[test]
fn impossible_topologies_and_settings() {
    let (f, _) = err(&replaced("hosts = 4", "hosts = 1"));
    assert_eq!(f, "topology.hosts");
    let text = BASE.replace("kind = \"star\"\nhosts = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }", "kind = \"fat_tree\"\nk = 3\nlink = { rate = \"10Gbps\", delay = \"1us\" }");
    let (f, m) = err(&text);
    assert_eq!(f, "topology.k");
    assert!(m.contains("even"), "{m}");
    let (f, _) = err(&replaced("[switch]", "[switch]\nqueues = 9"));
    assert_eq!(f, "switch.queues");
    let (f, _) = err(&replaced("[switch]", "[switch]\nqueues = 2\nscheduler = { kind = \"dwrr\", weights = [1] }"));
    assert_eq!(f, "switch.scheduler.weights");
    let (f, _) = err(&replaced("stop = { all_flows_done = true, max_time = \"1s\" }", "stop = { all_flows_done = true }"));
    assert_eq!(f, "stop.max_time");
    let (f, m) = err(&replaced("transport = { kind = \"tcp\", cc = \"dctcp\" }", "transport = { kind = \"tcp\", cc = \"dctcp\" }\npias = { thresholds = [\"100KB\"] }"));
    assert_eq!(f, "host.pias.thresholds");
    assert!(m.contains("switch.queues = 2"), "{m}");
    let (f, _) = err(&replaced("[switch]", "[switch]\nqueues = 3").replace("transport = { kind = \"tcp\", cc = \"dctcp\" }", "transport = { kind = \"tcp\", cc = \"dctcp\" }\npias = { thresholds = [\"1MB\", \"100KB\"] }"));
    assert_eq!(f, "host.pias.thresholds");
    let (f, _) = err(&replaced("cc = \"dctcp\"", "cc = \"dctcp\", ecn = false"));
    assert_eq!(f, "host.transport.ecn");
    let (f, _) = err(&replaced("delay = \"1us\"", "delay = \"1us\", loss = 1.5"));
    assert_eq!(f, "topology.link.loss");
    // A topology file with a host that is not connected.
    let dir = std::env::temp_dir().join(format!("dcnlab-badtopo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.toml");
    std::fs::write(&p, "hosts = 3\nswitches = 1\nlinks = [{ a = \"h0\", b = \"s0\", rate = \"1Gbps\", delay = \"1us\" }, { a = \"h1\", b = \"s0\", rate = \"1Gbps\", delay = \"1us\" }, { a = \"h2\", b = \"s5\", rate = \"1Gbps\", delay = \"1us\" }]").unwrap();
    let text = BASE.replace("kind = \"star\"\nhosts = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }", &format!("kind = \"file\"\npath = \"{}\"", p.display()));
    let (f, m) = err(&text);
    assert_eq!(f, "topology.path");
    assert!(m.contains("s5"), "{m}");
    let (f, m) = err(&BASE.replace("kind = \"star\"\nhosts = 4\nlink = { rate = \"10Gbps\", delay = \"1us\" }", "kind = \"file\"\npath = \"/nonexistent/topo.toml\""));
    assert_eq!(f, "topology.path");
    assert!(m.contains("cannot read"), "{m}");
}

#[test]
fn missing_flow_file() {
    let text = BASE.replace(
        "kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10",
        "kind = \"file\"\npath = \"no/such/flows.csv\"",
    );
    let (f, m) = err(&text);
    assert_eq!(f, "traffic[0].path");
    assert!(m.contains("cannot read flow file"), "{m}");
}

#[test]
fn sojourn_aqms_check_their_units_and_names() {
    let (f, m) = err(&replaced(
        "aqm = { kind = \"dctcp_red\", threshold = \"65KB\" }",
        "aqm = { kind = \"ecn_sharp\", ins_target = \"200KB\", pst_target = \"85us\", pst_interval = \"200us\" }",
    ));
    assert_eq!(f, "switch.aqm.ins_target");
    assert!(m.contains("time"), "{m}");
    let (f, _) = err(&replaced(
        "aqm = { kind = \"dctcp_red\", threshold = \"65KB\" }",
        "aqm = { kind = \"ecn_sharp\", ins_target = \"200us\", pst_target = \"85us\", pst_interval = \"200us\", control_law = \"cubic\" }",
    ));
    assert_eq!(f, "switch.aqm.control_law");
    let (f, m) = err(&replaced(
        "aqm = { kind = \"dctcp_red\", threshold = \"65KB\" }",
        "aqm = { kind = \"codel\", target = \"10us\", interval = \"200us\", mode = \"mark\" }",
    ));
    assert_eq!(f, "switch.aqm.mode");
    assert!(m.contains("ecn") && m.contains("drop"), "{m}");
    let sharp = |extra: &str| {
        replaced(
            "aqm = { kind = \"dctcp_red\", threshold = \"65KB\" }",
            &format!("aqm = {{ kind = \"ecn_sharp\", ins_target = \"100us\", pst_target = \"85us\", pst_interval = \"200us\", {extra} }}"),
        )
    };
    Sim::from_toml(&sharp("ins_max = \"300us\", ins_pmax = 0.2")).unwrap();
    assert_eq!(err(&sharp("ins_max = \"300us\"")).0, "switch.aqm.ins_pmax");
    assert_eq!(err(&sharp("ins_max = \"50us\", ins_pmax = 0.2")).0, "switch.aqm.ins_max");
    assert_eq!(err(&sharp("ins_max = \"300us\", ins_pmax = 1.5")).0, "switch.aqm.ins_pmax");
    assert_eq!(err(&sharp("ins_max = \"300KB\", ins_pmax = 0.2")).0, "switch.aqm.ins_max");
    let (f, _) = err(&replaced("aqm = { kind = \"dctcp_red\", threshold = \"65KB\" }", "aqm = { kind = \"tcn\", threshold = \"65KB\" }"));
    assert_eq!(f, "switch.aqm.threshold");
    for ok in [
        "{ kind = \"tcn\", threshold = \"150us\" }",
        "{ kind = \"codel\", target = \"85us\", interval = \"200us\" }",
        "{ kind = \"ecn_sharp\", ins_target = \"250KB\", pst_target = \"100KB\", pst_interval = \"200us\", signal = \"queue\" }",
        "{ kind = \"ecn_sharp\", ins_target = \"200us\", pst_target = \"85us\", pst_interval = \"200us\", division = \"tofino\", control_law = \"sqrt\" }",
    ] {
        Sim::from_toml(&replaced("aqm = { kind = \"dctcp_red\", threshold = \"65KB\" }", &format!("aqm = {ok}"))).unwrap();
    }
}

#[test]
fn a_congestion_controls_table_names_its_bad_key() {
    let cc = |t: &str| err(&replaced("cc = \"dctcp\"", &format!("cc = {t}")));
    let (f, m) = cc("{ kind = \"cubic\", beta = 1.5 }");
    assert_eq!(f, "host.transport.cc.beta");
    assert!(m.contains("(0, 1)"), "{m}");
    let (f, m) = cc("{ kind = \"cubic\", betta = 0.5 }");
    assert_eq!(f, "host.transport.cc.betta");
    assert!(m.contains("betta"), "{m}");
    let (f, m) = cc("{ kind = \"cubci\" }");
    assert_eq!(f, "host.transport.cc.kind");
    assert!(m.contains("cubci") && m.contains("cubic"), "{m}");
    let (f, _) = cc("{ beta = 0.5 }");
    assert_eq!(f, "host.transport.cc");
    let (f, _) = cc("3");
    assert_eq!(f, "host.transport.cc");
    // Keys of a control without any are refused too.
    let (f, _) = cc("{ kind = \"reno\", beta = 0.5 }");
    assert_eq!(f, "host.transport.cc.beta");
    // A traffic entry's table is checked under its own path.
    let t = BASE.replace("flows = 10", "flows = 10\ntransport = { cc = { kind = \"cubic\", c = -1.0 } }");
    let (f, _) = err(&t);
    assert_eq!(f, "traffic[0].transport.cc.c");
    Sim::from_toml(&replaced("cc = \"dctcp\"", "cc = { kind = \"cubic\", beta = 0.8, hystart = true }")).unwrap();
}

#[test]
fn a_receive_window_below_the_window_scale_unit_is_refused() {
    // rwnd >> wscale would be 0: a zero window that nothing opens.
    let (f, m) = err(&replaced("cc = \"dctcp\"", "cc = \"dctcp\", rwnd = \"10KB\""));
    assert_eq!(f, "host.transport.rwnd");
    assert!(m.contains("16384") && m.contains("wscale"), "{m}");
    Sim::from_toml(&replaced("cc = \"dctcp\"", "cc = \"dctcp\", rwnd = \"16384B\"")).unwrap();
    Sim::from_toml(&replaced("cc = \"dctcp\"", "cc = \"dctcp\", rwnd = \"10KB\", wscale = 13")).unwrap();
}

#[test]
fn acdc_needs_the_handshake_and_checks_its_keys() {
    let acdc = |vs: &str, tr: &str| replaced("transport = { kind = \"tcp\", cc = \"dctcp\" }", &format!("transport = {{ kind = \"tcp\", cc = \"cubic\"{tr} }}\nvswitch = {vs}"));
    Sim::from_toml(&acdc("{ kind = \"acdc\" }", ", handshake = true")).unwrap();
    let (f, m) = err(&acdc("{ kind = \"acdc\" }", ""));
    assert_eq!(f, "host.transport.handshake");
    assert!(m.contains("handshake = true") && m.contains("window scale"), "{m}");
    // A traffic entry's own transport is checked too, by its path.
    let text = format!("{}\ntransport = {{ handshake = false }}\n", acdc("{ kind = \"acdc\" }", ", handshake = true"));
    let (f, _) = err(&text);
    assert_eq!(f, "traffic[0].transport.handshake");
    let (f, m) = err(&acdc("{ kind = \"acdc\", rwnd_mni = \"1B\" }", ", handshake = true"));
    assert_eq!(f, "host.vswitch.rwnd_mni");
    assert!(m.contains("rwnd_min"), "{m}");
    let (f, m) = err(&acdc("{ kind = \"acdc\", rwnd_min = \"2 segments\" }", ", handshake = true"));
    assert_eq!(f, "host.vswitch.rwnd_min");
    assert!(m.contains("mss"), "{m}");
    let (f, _) = err(&acdc("{ kind = \"acdcc\" }", ", handshake = true"));
    assert_eq!(f, "host.vswitch.kind");
}

#[test]
fn stride_and_shuffle_keys() {
    let t = |kind: &str| replaced("kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10", kind);
    let (f, _) = err(&t("kind = \"stride\"\nsize = \"1MB\""));
    assert_eq!(f, "traffic[0].stride");
    let (f, _) = err(&t("kind = \"stride\"\nstride = 1\nstrides = [2]\nsize = \"1MB\""));
    assert_eq!(f, "traffic[0].strides");
    let (f, _) = err(&t("kind = \"stride\"\nstrides = [1, 0]\nsize = \"1MB\""));
    assert_eq!(f, "traffic[0].strides[1]");
    let (f, m) = err(&t("kind = \"stride\"\nstrides = [1, 4]\nsize = \"1MB\""));
    assert_eq!(f, "traffic[0].strides[1]");
    assert!(m.contains("host count 4"), "{m}");
    let (f, _) = err(&t("kind = \"stride\"\nstride = 1\nsize = \"1MB\"\nrepeat = 3"));
    assert_eq!(f, "traffic[0].period");
    let (f, _) = err(&t("kind = \"shuffle\"\nsize = \"1MB\"\nparallel = 0"));
    assert_eq!(f, "traffic[0].parallel");
    let (f, _) = err(&t("kind = \"shuffle\"\nsize = \"1MB\"\nhosts = [1]"));
    assert_eq!(f, "traffic[0].hosts");
    let (f, _) = err(&t("kind = \"shuffle\"\nsize = \"1MB\"\nhosts = [1, 9]"));
    assert_eq!(f, "traffic[0].hosts[1]");
    Sim::from_toml(&t("kind = \"shuffle\"\nsize = \"1MB\"")).unwrap();
    Sim::from_toml(&t("kind = \"stride\"\nstrides = [1, 2, 3]\nsize = \"1MB\"\nsequential = true\nrepeat = 2\nperiod = \"1ms\"")).unwrap();
}

#[test]
fn a_flow_stops_after_it_starts() {
    let t = replaced("kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10", "kind = \"flows\"\nlist = [{ src = 0, dst = 1, size = \"inf\", start = \"2ms\", stop = \"2ms\" }]");
    let (f, m) = err(&t);
    assert_eq!(f, "traffic[0].list[0].stop");
    assert!(m.contains("after"), "{m}");
}

#[test]
fn closed_loop_keys() {
    let t = |kind: &str| replaced("kind = \"poisson\"\nsizes = \"web_search\"\nload = 0.5\nflows = 10", kind);
    assert_eq!(err(&t("kind = \"closed_loop\"\nsizes = \"web_search\"\nmessages = 0")).0, "traffic[0].messages");
    assert_eq!(err(&t("kind = \"closed_loop\"\nsizes = \"web_search\"\nmessages = 5\nthreads = 0")).0, "traffic[0].threads");
    assert_eq!(err(&t("kind = \"closed_loop\"\nsizes = \"web_serch\"\nmessages = 5")).0, "traffic[0].sizes");
    assert_eq!(err(&t("kind = \"closed_loop\"\nsizes = \"web_search\"\nmessages = 5\nhosts = [2]")).0, "traffic[0].hosts");
    Sim::from_toml(&t("kind = \"closed_loop\"\nsizes = \"data_mining\"\nmessages = 5")).unwrap();
}
