import HandoffCore
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Activity: userInfo transfer and lifetime")
struct ActivityTests {
    static let userInfo: UserInfo = ["a": .integer(1), "b": .string("two"), "c": .bool(true)]

    static func activity(required: Set<String>?) -> Activity {
        Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit, userInfo: userInfo, requiredUserInfoKeys: required)
    }

    @Test("defaults are Apple's: eligible for handoff only, nothing else set")
    func defaults() {
        let activity = Activity(activityType: Fixtures.notesEdit)
        #expect(activity.isEligibleForHandoff)
        #expect(!activity.isEligibleForSearch)
        #expect(!activity.isEligibleForPublicIndexing)
        #expect(!activity.isEligibleForPrediction)
        #expect(!activity.needsSave)
        #expect(!activity.supportsContinuationStreams)
        #expect(activity.userInfo.isEmpty)
        #expect(activity.requiredUserInfoKeys == nil)
        #expect(activity.keywords.isEmpty)
        #expect(activity.title == nil && activity.webpageURL == nil && activity.expirationDate == nil)
        #expect(Activity(activityType: Fixtures.notesEdit).id != activity.id, "each activity gets its own ID")
    }

    @Test("requiredUserInfoKeys nil transfers the whole userInfo")
    func nilRequiredKeysTransfersAll() {
        #expect(Self.activity(required: nil).transferredUserInfo == Self.userInfo)
    }

    @Test("an empty requiredUserInfoKeys transfers nothing")
    func emptyRequiredKeysTransfersNothing() {
        #expect(Self.activity(required: []).transferredUserInfo == [:])
    }

    @Test("requiredUserInfoKeys picks those keys; required keys missing from userInfo are ignored")
    func requiredKeysFilter() {
        #expect(Self.activity(required: ["a", "c"]).transferredUserInfo == ["a": .integer(1), "c": .bool(true)])
        #expect(Self.activity(required: ["a", "missing"]).transferredUserInfo == ["a": .integer(1)])
        #expect(Self.activity(required: ["missing"]).transferredUserInfo == [:])
    }

    @Test("transferredUserInfo does not change userInfo")
    func transferLeavesUserInfo() {
        let activity = Self.activity(required: ["a"])
        _ = activity.transferredUserInfo
        #expect(activity.userInfo == Self.userInfo)
    }

    @Test("addUserInfoEntries adds new keys and replaces existing ones")
    func addUserInfoEntries() {
        var activity = Self.activity(required: nil)
        activity.addUserInfoEntries(from: ["b": .string("replaced"), "d": .null])
        #expect(activity.userInfo == ["a": .integer(1), "b": .string("replaced"), "c": .bool(true), "d": .null])
        activity.addUserInfoEntries(from: [:])
        #expect(activity.userInfo.count == 4)
    }

    @Test("an activity without expirationDate never expires")
    func noExpiration() {
        let activity = Self.activity(required: nil)
        #expect(!activity.isExpired(at: .distantFuture))
        #expect(activity.isOffered(at: .distantFuture))
    }

    @Test("an activity expires exactly at its expirationDate")
    func expirationBoundary() {
        var activity = Self.activity(required: nil)
        let expiry = Fixtures.now
        activity.expirationDate = expiry
        #expect(!activity.isExpired(at: expiry.addingTimeInterval(-0.001)))
        #expect(activity.isOffered(at: expiry.addingTimeInterval(-0.001)))
        #expect(activity.isExpired(at: expiry))
        #expect(!activity.isOffered(at: expiry))
        #expect(activity.isExpired(at: expiry.addingTimeInterval(0.001)))
        #expect(!activity.isOffered(at: expiry.addingTimeInterval(0.001)))
    }

    @Test("an activity not eligible for handoff is never offered")
    func ineligible() {
        var activity = Self.activity(required: nil)
        activity.isEligibleForHandoff = false
        #expect(!activity.isOffered(at: Fixtures.now))
        #expect(!activity.isExpired(at: Fixtures.now))
    }
}
