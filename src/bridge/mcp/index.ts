export * from "./elicitation.js";
export * from "./modern.js";
export * from "./progress.js";
export * from "./results.js";
export * from "./tasks.js";
export * from "./tools.js";
