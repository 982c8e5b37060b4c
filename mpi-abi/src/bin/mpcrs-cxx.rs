//! mpcrs-cxx: the compiler wrapper under its C++ name (it picks the C++ compiler
//! from the name it is called by; see mpcrs-cc.rs).
include!("mpcrs-cc.rs");
