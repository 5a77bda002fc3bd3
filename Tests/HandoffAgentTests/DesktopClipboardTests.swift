import Testing

@testable import HandoffAgent

@Suite("DesktopClipboard: which clipboard, which type")
struct DesktopClipboardTests {
    @Test("X11 with DISPLAY, Wayland with WAYLAND_DISPLAY; GNOME's Wayland and no display say why not")
    func detect() throws {
        #expect(try DesktopClipboard.detect(environment: ["DISPLAY": ":1"]).get().kind == .x11)
        #expect(try DesktopClipboard.detect(environment: ["DISPLAY": ":1", "WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "KDE"]).get().kind == .wayland)
        guard case .failure(let gnome) = DesktopClipboard.detect(environment: ["WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]) else {
            Issue.record("GNOME's Wayland has no data-control")
            return
        }
        #expect(gnome.reason.contains("data-control"))
        guard case .failure(let none) = DesktopClipboard.detect(environment: ["DISPLAY": ""]) else { Issue.record("no display"); return }
        #expect(none.reason.contains("DISPLAY"))
    }

    @Test("text is taken before images, and offered as a MIME type; text goes back as UTF8_STRING on X11")
    func types() {
        #expect(DesktopClipboard.pick(["TARGETS", "TIMESTAMP", "image/png", "UTF8_STRING"])! == ("UTF8_STRING", "text/plain;charset=utf-8"))
        #expect(DesktopClipboard.pick(["TARGETS", "image/png"])! == ("image/png", "image/png"))
        #expect(DesktopClipboard.pick(["TARGETS", "STRING"])! == ("STRING", "text/plain"))
        #expect(DesktopClipboard.pick(["TARGETS", "application/x-weird"]) == nil)
        #expect(DesktopClipboard(kind: .x11).putType("text/plain;charset=utf-8") == "UTF8_STRING")
        #expect(DesktopClipboard(kind: .x11).putType("image/png") == "image/png")
        #expect(DesktopClipboard(kind: .wayland).putType("text/plain") == "text/plain")
        #expect(DesktopClipboard(kind: .x11).writeCommand("UTF8_STRING") == ["xclip", "-selection", "clipboard", "-i", "-t", "UTF8_STRING"])
    }
}
