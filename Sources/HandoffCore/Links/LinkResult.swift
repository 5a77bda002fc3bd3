/// `link`'s answer: the link, and what it leads to.
public struct LinkResult: ControlResult, Equatable {
    /// The link's text (``HandoffLink/text``).
    public var link: String
    public var activityType: String
    public var title: String?

    public init(_ link: HandoffLink) {
        (self.link, self.activityType, self.title) = (link.text, link.activityType.rawValue, link.title)
    }

    public var json: JSONValue {
        .object(["link": .string(link), "activityType": .string(activityType), "title": title.json])
    }

    public init(json: JSONValue) {
        (link, activityType, title) = (json.text("link"), json.text("activityType"), json.optionalText("title"))
    }
}
