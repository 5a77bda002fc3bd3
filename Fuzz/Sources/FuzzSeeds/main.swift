@main struct FuzzSeeds { static func main() { print("seeds") } }
