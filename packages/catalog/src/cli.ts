#!/usr/bin/env node
import { VERSION } from './version.js';

console.error(VERSION);
