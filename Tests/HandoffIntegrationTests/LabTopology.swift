/// How the lab's hosts are connected (`scripts/lab up N [--subnets 2 --router MODE]`).
enum LabTopology: Sendable {
    /// Every host on one link, 198.18.0.0/24: the lab every test used first.
    case oneLink
    /// Odd hosts on 198.18.1.0/24, even hosts on 198.18.2.0/24, joined by router host `r`
    /// (198.18.1.254 and 198.18.2.254) that forwards unicast, and reflects mDNS if asked.
    case twoSubnets(LabRouter)

    /// The arguments `scripts/lab up N` takes for this topology.
    var upArguments: [String] {
        switch self {
        case .oneLink: []
        case .twoSubnets(let router): ["--subnets", "2", "--router", router.rawValue]
        }
    }
}

/// What the router between two subnets forwards.
enum LabRouter: String, Sendable {
    /// Unicast only: no multicast routing, so mDNS stays on its link.
    case unicast
    /// Unicast, and mDNS through Avahi's reflector (`enable-reflector=yes` on both legs).
    case reflector
}
