/// The words of a search query as FTS5's unicode61 tokenizer splits text: runs of letters,
/// numbers and private-use characters; everything else (spaces, punctuation, quotes, `*`)
/// separates them. The index folds case and diacritics itself when it reads each quoted word.
func searchWords(_ query: String) -> [String] {
    var words: [String] = []
    var word = String.UnicodeScalarView()
    for scalar in query.unicodeScalars {
        if isTokenCharacter(scalar) {
            word.append(scalar)
        } else if !word.isEmpty {
            words.append(String(word))
            word = String.UnicodeScalarView()
        }
    }
    if !word.isEmpty { words.append(String(word)) }
    return words
}

/// unicode61's token characters: general categories L*, N* and Co, and Mn, the combining marks
/// it folds away (so that a decomposed "é" stays inside its word).
private func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
         .decimalNumber, .letterNumber, .otherNumber, .privateUse, .nonspacingMark:
        true
    default:
        false
    }
}
