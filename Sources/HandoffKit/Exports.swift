// Apps import only HandoffKit: the model types (ActivityType, PropertyListValue, AppManifest,
// HandoffError, ...) come from HandoffCore.
@_exported import HandoffCore
