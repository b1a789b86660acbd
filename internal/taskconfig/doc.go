// Package taskconfig parses, validates and applies Dynabench task configs.
//
// A task config says which fields the owner supplies (context), which the
// annotator enters (input), which the model answers (output), how to decide
// that the model was fooled, and how models are scored. Dynabench has two
// dialects of it: the original "dynatask" one (v1: context, input and output
// are lists of annotation objects) and the one read by its newer UI (v2:
// goal, context as an object, user_input, model_input, model_output,
// model_evaluation_metric), and real configs mix both. Parse normalises both
// into one Config so the rest of the platform never has to know which dialect
// a task was written in.
//
// Parse keeps the original text and every key of the document, known or not,
// and reports every problem at once with the path of the offending value, so a
// task owner can fix a config in one go. It never panics, whatever the input.
//
// The Check methods apply a Config to one example: the owner's context, the
// annotator's input, the model's output and the metadata gathered after the
// model answered or during validation. ModelWrong decides whether the model
// was fooled.
package taskconfig
