import ServiceLifecycle

extension ServiceGroupConfiguration.ServiceConfiguration {
    /// A service of handoffd's group under `name` (ServiceLifecycle's logs and errors say it).
    /// Without a name the configuration names a service `"\(service)"`, which prints each stored
    /// property of a struct service by reflection: the protocol conformance lookups that takes
    /// scan the static binary's conformance records, about 3 ms of CPU at every start (issue 21).
    static func named(_ name: String, _ service: any Service) -> Self {
        .init(service: service, serviceName: name)
    }
}
