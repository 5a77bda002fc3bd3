// Trust: who this device is, which devices it is paired with, and how they recognise each other.
